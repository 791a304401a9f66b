//! Finding opponents: challenges and rematches ([`challenges`]), seeks ([`seeks`]), and the
//! ratings that rated games move ([`ratings`]: histories, the leaderboard, and the application
//! of a rated game's end, which the ratings job runs).

pub mod challenges;
pub mod ratings;
pub mod seeks;
