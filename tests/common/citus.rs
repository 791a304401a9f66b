//! Test databases on a Citus cluster: when the tests' PostgreSQL server (`DATABASE_URL`) is the
//! coordinator of one (scripts/citus), each fresh database is made on every node, the workers
//! are added to it (and the tests distribute it as `golf-server distribute` does).

use sqlx::Connection;
use sqlx::postgres::PgConnection;

/// A worker of the cluster, as the coordinator's metadata names it.
pub struct Worker {
    host: String,
    port: i32,
}

impl Worker {
    /// The URL of `database` on this worker.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://postgres@{}:{}/{database}", self.host, self.port)
    }
}

impl Worker {
    /// Drops `database` on this worker, first rolling back the transactions the coordinator had
    /// prepared there: ending the coordinator's sessions in the middle of a two-phase commit
    /// leaves them behind, and they hold the database.
    pub async fn drop_database(&self, database: &str) -> Result<(), sqlx::Error> {
        let mut conn = PgConnection::connect(&self.url("postgres")).await?;
        let prepared: Vec<String> =
            sqlx::query_scalar("SELECT gid FROM pg_prepared_xacts WHERE database = $1")
                .bind(database)
                .fetch_all(&mut conn)
                .await?;
        if !prepared.is_empty() {
            let mut inside = PgConnection::connect(&self.url(database)).await?;
            for gid in prepared {
                sqlx::query(sqlx::AssertSqlSafe(format!("ROLLBACK PREPARED '{gid}'")))
                    .execute(&mut inside)
                    .await?;
            }
        }
        let statement = format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)");
        sqlx::query(sqlx::AssertSqlSafe(statement))
            .execute(&mut conn)
            .await
            .map(drop)
    }
}

/// The workers of the cluster whose coordinator `admin` is connected to; none when the server
/// is a plain PostgreSQL.
pub async fn workers(admin: &mut PgConnection) -> Vec<Worker> {
    let citus: Option<i32> =
        sqlx::query_scalar("SELECT 1 FROM pg_extension WHERE extname = 'citus'")
            .fetch_optional(&mut *admin)
            .await
            .expect("read the extensions");
    if citus.is_none() {
        return Vec::new();
    }
    let nodes: Vec<(String, i32)> = sqlx::query_as(
        "SELECT nodename, nodeport FROM pg_dist_node WHERE groupid <> 0 AND isactive \
         ORDER BY nodeid",
    )
    .fetch_all(admin)
    .await
    .expect("read the cluster's workers");
    nodes
        .into_iter()
        .map(|(host, port)| Worker { host, port })
        .collect()
}

/// Makes the fresh database `name` (at `url` on the coordinator) on every worker, with Citus
/// there and on the coordinator, and adds the workers to it.
pub async fn prepare(url: &str, name: &str, workers: &[Worker]) {
    for worker in workers {
        let mut conn = PgConnection::connect(&worker.url("postgres"))
            .await
            .expect("connect to a worker");
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut conn)
            .await
            .expect("create the test database on a worker");
        with_citus(&worker.url(name)).await;
    }
    let mut coordinator = with_citus(url).await;
    let own: (String, i32) = sqlx::query_as("SELECT host(inet_server_addr()), inet_server_port()")
        .fetch_one(&mut coordinator)
        .await
        .expect("the coordinator's address");
    sqlx::query("SELECT citus_set_coordinator_host($1, $2)")
        .bind(&own.0)
        .bind(own.1)
        .execute(&mut coordinator)
        .await
        .expect("name the coordinator");
    for worker in workers {
        sqlx::query("SELECT citus_add_node($1, $2)")
            .bind(&worker.host)
            .bind(worker.port)
            .execute(&mut coordinator)
            .await
            .expect("add a worker");
    }
}

/// A connection to the database at `url`, after `CREATE EXTENSION citus` there.
async fn with_citus(url: &str) -> PgConnection {
    let mut conn = PgConnection::connect(url)
        .await
        .unwrap_or_else(|error| panic!("connect to {url}: {error}"));
    sqlx::raw_sql("CREATE EXTENSION citus")
        .execute(&mut conn)
        .await
        .unwrap_or_else(|error| panic!("citus in {url}: {error}"));
    conn
}
