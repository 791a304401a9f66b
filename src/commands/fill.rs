//! `golf-server fill`: a large database for measuring requests against, written through the
//! service and the store exactly as the API writes games (every entry hashed and chained, every
//! projection and account row kept), only without HTTP in between.
//!
//! The games, oldest first: `finished` one-hole two-seat games played to their end by bots
//! (every tenth with seat 0 an account's, which leaves at its first turn so that the greedy bot
//! plays it out: the accounts' lists of finished games), then `playing` games of an account and
//! an anonymous player at their initial reveal, then `waiting` public games with one seat taken
//! (the lobby). The accounts are `fill-{run}-{n}`, `accounts` of them, each in about as many
//! games as the others.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use uuid::Uuid;

use crate::engine::{BotKind, RulesInput};
use crate::service::accounts::NewAccountRequest;
use crate::service::{
    Answer, JoinRequest, NewGameRequest, ParsedLater, ServiceError, Services, Settings,
};
use crate::store::EventStore;

/// What to write.
#[derive(Clone, Copy, Debug)]
pub struct FillPlan {
    pub finished: u64,
    pub playing: u64,
    pub waiting: u64,
    pub accounts: u64,
    /// Games written at once.
    pub concurrency: u64,
}

/// Every `ACCOUNT_EVERY`-th finished game has an account's seat.
const ACCOUNT_EVERY: u64 = 10;

/// The kinds of game, in the order they are written.
enum Kind {
    Finished { account: Option<usize> },
    Playing { account: usize },
    Waiting,
}

impl FillPlan {
    fn games(&self) -> u64 {
        self.finished + self.playing + self.waiting
    }

    /// Game `n`'s kind and account.
    fn kind(&self, n: u64) -> Kind {
        let account = |k: u64| (k % self.accounts.max(1)) as usize;
        if n < self.finished {
            let with_account = self.accounts > 0 && n.is_multiple_of(ACCOUNT_EVERY);
            Kind::Finished {
                account: with_account.then(|| account(n / ACCOUNT_EVERY)),
            }
        } else if n < self.finished + self.playing && self.accounts > 0 {
            Kind::Playing {
                account: account(n - self.finished),
            }
        } else {
            Kind::Waiting
        }
    }
}

/// Writes `plan` through a service over `store`; prints each account as a JSON line
/// `{"username", "token"}` to stdout, and progress to stderr every 10,000 games.
pub async fn run(store: Arc<dyn EventStore>, plan: FillPlan) -> Result<(), ServiceError> {
    let metrics = crate::metrics::Metrics::new().games();
    let services = Services::new(store, metrics, Settings::default());
    let service = &services;
    let tokens = sign_up(service, plan.accounts).await?;
    let next = AtomicU64::new(0);
    let started = Instant::now();
    // Workers on this task, not spawned: the service's futures are not `Send` (actix runs them
    // on the thread that took the request), and the time is the database's anyway.
    let workers = (0..plan.concurrency.max(1)).map(|_| async {
        loop {
            let n = next.fetch_add(1, Ordering::Relaxed);
            if n >= plan.games() {
                return Ok::<(), ServiceError>(());
            }
            write_game(service, &tokens, plan.kind(n)).await?;
            if (n + 1).is_multiple_of(10_000) {
                let rate = (n + 1) as f64 / started.elapsed().as_secs_f64();
                eprintln!("{} of {} games ({rate:.0}/s)", n + 1, plan.games());
            }
        }
    });
    futures_util::future::try_join_all(workers).await?;
    Ok(())
}

/// Signs up `count` accounts under this run's names; their tokens.
async fn sign_up(service: &Services, count: u64) -> Result<Vec<String>, ServiceError> {
    let run = &Uuid::new_v4().simple().to_string()[..8];
    let mut tokens = Vec::new();
    for n in 0..count {
        let request = NewAccountRequest {
            username: format!("fill-{run}-{n}"),
            display_name: None,
        };
        match service.accounts.create_account(request, None).await? {
            Answer::Fresh(created) => {
                let line = serde_json::json!({
                    "username": created.account.username,
                    "token": created.token,
                });
                println!("{line}");
                tokens.push(created.token);
            }
            Answer::Replayed(_) => unreachable!("no idempotency key was given"),
        }
    }
    Ok(tokens)
}

async fn write_game(service: &Services, tokens: &[String], kind: Kind) -> Result<(), ServiceError> {
    let request = NewGameRequest {
        seats: 2,
        holes: 1,
        rules: RulesInput::default(),
        private: false,
        decks: None,
        rated: false,
    };
    let Answer::Fresh(created) = service.games.create(None, request, None).await? else {
        unreachable!("no idempotency key was given");
    };
    let (id, host) = (created.view.id, created.host_token);
    match kind {
        Kind::Finished { account: None } => {
            join(service, id, Some(&host), Some(BotKind::Greedy)).await?;
            join(service, id, Some(&host), Some(BotKind::Random)).await?;
        }
        Kind::Finished {
            account: Some(account),
        } => {
            join(service, id, Some(&tokens[account]), None).await?;
            join(service, id, Some(&host), Some(BotKind::Greedy)).await?;
            service
                .games
                .leave(id, Some(&tokens[account]), ParsedLater::parsed(None))
                .await?;
        }
        Kind::Playing { account } => {
            join(service, id, Some(&tokens[account]), None).await?;
            join(service, id, None, None).await?;
        }
        Kind::Waiting => join(service, id, None, None).await?,
    }
    Ok(())
}

/// Takes the next seat of game `id` with `token`, as `bot` when given (`token` the host's).
async fn join(
    service: &Services,
    id: Uuid,
    token: Option<&str>,
    bot: Option<BotKind>,
) -> Result<(), ServiceError> {
    let request = JoinRequest {
        name: Some(if bot.is_some() { "Bot" } else { "Fill" }.to_owned()),
        client_seed: None,
        bot,
        idempotency: None,
    };
    service
        .games
        .join(id, token, ParsedLater::parsed(request))
        .await
        .map(drop)
}
