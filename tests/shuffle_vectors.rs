//! The fair-shuffle protocol against vectors computed by an independent implementation
//! (`tests/vectors/shuffle_vectors.py`, Python's hashlib): server seed = bytes 0..32,
//! client seeds `["alice", "", "Zoë 🎲", ""]` (four seats) and `["", ""]` (two seats).

use golf_server::engine::{
    Card, ClientSeed, Command, Event, PlayerName, Rules, Secrets, State, Timestamp, canonical_deck,
    execute, shuffle,
};
use uuid::Uuid;

const COMMITMENT: &str = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd";
const SEED_FOUR: &str = "13390e3c6b4a58e29debfe68937378fda2b379d2eb087070ea7b6ac8d9e8f471";
const SEED_TWO_EMPTY: &str = "169a9bf1199441bcfd92fdf46cbe4e585f2d8bd4add18bc9c98c8b091ba97a11";
const HOLE_1: [&str; 52] = [
    "8S", "4H", "2H", "QD", "10C", "5D", "8H", "6C", "6D", "7C", "9C", "QC", "JC", "KS", "2S",
    "6S", "3D", "5H", "3H", "2D", "3S", "5C", "KC", "10D", "9H", "AS", "JH", "3C", "4S", "9D",
    "9S", "AD", "6H", "7H", "4D", "10H", "AC", "QS", "8D", "2C", "4C", "AH", "8C", "JD", "QH",
    "7D", "KD", "7S", "10S", "JS", "5S", "KH",
];
const HOLE_2: [&str; 52] = [
    "5D", "QC", "2S", "7C", "KH", "KS", "9D", "4S", "10S", "4H", "6D", "KD", "2H", "3D", "AS",
    "5C", "4C", "9C", "KC", "JD", "AH", "8D", "JH", "AC", "AD", "JC", "10H", "QH", "10C", "5S",
    "10D", "JS", "2C", "2D", "3H", "4D", "9H", "6H", "8S", "8C", "3S", "7D", "7H", "6S", "8H",
    "5H", "9S", "QS", "3C", "QD", "7S", "6C",
];
const HOLE_1_TWO_EMPTY: [&str; 52] = [
    "AD", "9C", "KH", "7D", "2C", "6C", "2H", "10D", "7C", "10C", "7H", "AS", "5H", "4H", "3D",
    "9H", "10H", "2D", "KD", "7S", "9D", "3C", "8S", "6D", "KC", "3H", "5S", "10S", "QC", "JS",
    "JC", "AC", "2S", "8D", "KS", "QS", "4C", "8C", "9S", "QD", "JD", "8H", "6S", "AH", "QH", "4D",
    "5D", "3S", "JH", "6H", "4S", "5C",
];
const RESHUFFLE_H3_K1: [&str; 20] = [
    "8S", "QS", "KS", "2S", "5H", "7S", "10S", "2H", "5S", "3S", "AH", "7H", "4S", "AS", "6S",
    "6H", "9S", "3H", "JS", "4H",
];

fn server_seed() -> [u8; 32] {
    std::array::from_fn(|i| i as u8)
}

fn codes(cards: &[Card]) -> Vec<&'static str> {
    cards.iter().map(|c| c.code()).collect()
}

fn four_seat_seed() -> [u8; 32] {
    shuffle::effective_seed(&server_seed(), ["alice", "", "Zoë 🎲", ""])
}

#[test]
fn commitment_is_sha256_of_the_raw_seed_bytes() {
    assert_eq!(shuffle::commitment(&server_seed()), COMMITMENT);
}

#[test]
fn effective_seed_hashes_client_seeds_with_terminators_including_non_ascii_and_empty() {
    assert_eq!(hex::encode(four_seat_seed()), SEED_FOUR);
    let two_empty = shuffle::effective_seed(&server_seed(), ["", ""]);
    assert_eq!(hex::encode(two_empty), SEED_TWO_EMPTY);
}

#[test]
fn deal_orders_of_holes_one_and_two_match_the_reference() {
    let seed = four_seat_seed();
    assert_eq!(codes(&shuffle::deal_order(&seed, 1, 0)), HOLE_1);
    assert_eq!(codes(&shuffle::deal_order(&seed, 2, 0)), HOLE_2);
    let two_empty = shuffle::effective_seed(&server_seed(), ["", ""]);
    assert_eq!(
        codes(&shuffle::deal_order(&two_empty, 1, 0)),
        HOLE_1_TWO_EMPTY
    );
}

#[test]
fn reshuffle_one_of_hole_three_matches_the_reference() {
    let cards = &canonical_deck()[..20];
    let order = shuffle::reshuffle(&four_seat_seed(), 3, 1, cards);
    assert_eq!(codes(&order), RESHUFFLE_H3_K1);
}

#[test]
fn a_game_with_these_client_seeds_deals_the_reference_order() {
    let secrets = Secrets {
        server_seed: server_seed(),
        decks: Vec::new(),
    };
    let mut state = State::default();
    let mut commands = vec![Command::Create {
        game_id: Uuid::nil(),
        seats: 4,
        holes: 2,
        rules: Rules::resolve(4, None, None, None).expect("default rules"),
        commitment: COMMITMENT.to_owned(),
        stacked: false,
        rated: false,
    }];
    for client_seed in ["alice", "", "Zoë 🎲", ""] {
        commands.push(Command::Join {
            name: PlayerName::parse("P").expect("name"),
            bot: None,
            client_seed: ClientSeed::parse(client_seed).expect("client seed"),
            account: None,
        });
    }
    let mut dealt = None;
    for command in &commands {
        for event in execute(&mut state, command, &secrets, Timestamp(0)).expect("accepted") {
            if let Event::HoleDealt { deck, .. } = event {
                dealt = Some(deck);
            }
        }
    }
    let deck = dealt.expect("hole 1 dealt when the last seat is taken");
    assert_eq!(codes(&deck), HOLE_1);
    // Dealer 0: card d goes to seat (1 + d) mod 4 at position d div 4.
    assert_eq!(state.players[1].grid[0].code(), HOLE_1[0]);
    assert_eq!(state.players[0].grid[0].code(), HOLE_1[3]);
    assert_eq!(state.players[1].grid[5].code(), HOLE_1[20]);
    assert_eq!(state.discard.last().map(|c| c.code()), Some(HOLE_1[24]));
    assert_eq!(state.stock.last().map(|c| c.code()), Some(HOLE_1[25]));
}
