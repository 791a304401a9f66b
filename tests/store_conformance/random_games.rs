//! Random legal games stored as the service stores them must rebuild to their projections.

use crate::common::Backend;
use golf_server::engine::{
    self, BotKind, ClientSeed, Command, FlipRule, PlayerName, Rules, Secrets, State, Timestamp,
    shuffle,
};
use golf_server::store::{
    self, EventStore, GameUpdate, NewEvent, NewGame, NewSeat, codec, verify_chain,
};
use rand::SeedableRng;
use rand::rngs::StdRng;
use uuid::Uuid;

use super::TestDb;
use super::fixtures::append_at;

/// A game played by random bots through the engine and stored as the service stores one:
/// each request's events in one append at the version it read, with the projection after
/// them. Each join is a request (it takes its seat in the same append), then every request
/// carries up to `batch` moves (a bot's turns are appended with the request that hands it the
/// turn). Returns the game's id and final state.
async fn play_random_game(store: &dyn EventStore, number: u64, batch: usize) -> (Uuid, State) {
    let seats = 2 + (number % 3) as u8;
    let flips = [FlipRule::Never, FlipRule::Optional, FlipRule::Always];
    let final_turns = number % 2 == 1;
    let rules = Rules::resolve(
        seats,
        Some(final_turns),
        Some(flips[(number / 2) as usize % 3]),
        None,
    )
    .expect("rules");
    let secrets = Secrets {
        server_seed: [number as u8; 32],
        decks: Vec::new(),
    };
    let mut rng = StdRng::seed_from_u64(number);
    let start = Timestamp::parse("2026-05-01T12:00:00.000000Z").expect("a time");
    let mut requests = (1..).map(|n| Timestamp(start.0 + n * 1_500_000));
    let mut state = State::default();

    let id = Uuid::new_v4();
    let create = Command::Create {
        game_id: id,
        seats,
        holes: 2,
        rules,
        commitment: shuffle::commitment(&secrets.server_seed),
        stacked: false,
        rated: false,
    };
    let events = run_command(&mut state, &create, &secrets, start);
    let game = NewGame {
        id,
        created_at: start,
        seats: i32::from(seats),
        holes: 2,
        rules,
        commitment: state.commitment.clone(),
        server_seed: secrets.server_seed,
        host_token_hash: [1; 32],
        private: false,
        stacked: false,
        decks: None,
        status: state.status,
        projection: codec::projection(&state),
        host_account: None,
        rated: false,
    };
    store.create_game(game, events, None).await.expect("create");

    for seat in 0..seats {
        let name = format!("Random {seat}");
        let join = Command::Join {
            name: PlayerName::parse(&name).expect("a name"),
            bot: Some(BotKind::Random),
            client_seed: ClientSeed::default(),
            account: None,
        };
        let version = state.version as i64;
        let at = requests.next().expect("a time");
        let events = run_command(&mut state, &join, &secrets, at);
        let taken = NewSeat {
            seat: i32::from(seat),
            name,
            bot: Some("random".to_owned()),
            client_seed: String::new(),
            token_hash: None,
            account: None,
        };
        let update = GameUpdate {
            status: state.status,
            projection: codec::projection(&state),
            new_seats: vec![taken],
            snapshots: Vec::new(),
            deadline_at: engine::turn_deadline(&state),
            account_games: Vec::new(),
            account_events: Vec::new(),
        };
        append_at(store, id, version, events, update, None)
            .await
            .expect("join at the version read");
    }

    loop {
        let version = state.version as i64;
        let at = requests.next().expect("a time");
        let mut events = Vec::new();
        for _ in 0..batch {
            let Some(seat) = (0..seats).find(|&s| !engine::legal_moves(&state, s).is_empty())
            else {
                break;
            };
            let mv = engine::choose(BotKind::Random, &engine::observe(&state, seat), &mut rng);
            events.extend(run_command(
                &mut state,
                &Command::Play { seat, mv },
                &secrets,
                at,
            ));
        }
        if events.is_empty() {
            return (id, state);
        }
        let update = GameUpdate {
            status: state.status,
            projection: codec::projection(&state),
            new_seats: Vec::new(),
            snapshots: Vec::new(),
            deadline_at: engine::turn_deadline(&state),
            account_games: Vec::new(),
            account_events: Vec::new(),
        };
        append_at(store, id, version, events, update, None)
            .await
            .expect("append at the version read");
    }
}

/// Decides `command` and applies its events at `at`; returns them as the service stores them.
fn run_command(
    state: &mut State,
    command: &Command,
    secrets: &Secrets,
    at: Timestamp,
) -> Vec<NewEvent> {
    let events = engine::execute(state, command, secrets, at).expect("a legal command");
    codec::new_events(&events, at)
}

pub async fn rebuild_equals_projection_after_random_games(backend: Backend) {
    // Random legal games, stored in appends of various sizes: each stored log verifies along its
    // chain, and replayed through the rules it gives the stored projection.
    let db = TestDb::connect(backend).await;
    let store = db.store.as_ref();
    for number in 0..6 {
        let (id, played) = play_random_game(store, number, 1 + number as usize % 4).await;
        assert_eq!(played.status, engine::Status::Finished, "game {number}");
        let record = store.load_game(id).await.expect("load").expect("game");
        assert_eq!(record.version, played.version as i64);
        let entries = store::load_log(store, id, record.version)
            .await
            .expect("log");
        assert_eq!(
            verify_chain(&record.server_seed, &entries),
            Ok(record.head_hash)
        );
        let secrets = codec::secrets_of(&record).expect("the secrets");
        let rebuilt =
            golf_server::audit::replay::rebuild(&entries, &secrets).expect("the log replays");
        let stored: State = serde_json::from_str(record.projection.get()).expect("a projection");
        assert_eq!(rebuilt, stored, "game {number}");
        assert_eq!(rebuilt, played, "game {number}");
        assert_eq!(record.players, i32::from(played.seats));
    }
}
