#!/usr/bin/env python3
"""The plan on the Citus cluster of every statement the service runs while it plays.

On the local cluster (scripts/citus): a fresh database golf_plans on every node, distributed by
`golf-server distribute`; the server plays one game of two accounts (golf-loadgen) and a few reads
with every statement logged (log_statement = all, on that database only); then each distinct
statement is explained (PREPARE, then EXPLAIN EXECUTE with the parameters it was first run with),
and this prints, for each, whether Citus runs it on one shard of one worker ("router"), through
subplans, or on every shard, with the workers it reaches. `--full` prints each whole plan.

    scripts/citus_plans.py [--full] [--bin target/debug]
"""

import argparse
import json
import re
import subprocess
import time
import urllib.request

COORDINATOR = 9700
DATABASE = "golf_plans"
LOG = "/var/log/postgresql/postgresql-15-golf_citus_coordinator.log"
PORT = 18392


def psql(port, database, sql, quiet=False):
    result = subprocess.run(
        ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", str(port),
         "-U", "postgres", "-d", database, "-tA", "-c", sql],
        capture_output=True, text=True, env={"PGOPTIONS": "-c client_min_messages=warning",
                                              "PATH": "/usr/bin:/bin"})
    if result.returncode != 0 and not quiet:
        raise SystemExit(f"psql on {port}/{database}: {result.stderr}")
    return result.stdout if result.returncode == 0 else None


def fresh_database():
    workers = psql(COORDINATOR, "postgres",
                   "SELECT nodeport FROM pg_dist_node WHERE groupid <> 0 ORDER BY nodeid").split()
    for port in [COORDINATOR, *workers]:
        psql(port, "postgres", f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        psql(port, "postgres", f"CREATE DATABASE {DATABASE}")
        psql(port, DATABASE, "CREATE EXTENSION citus")
    psql(COORDINATOR, DATABASE, f"SELECT citus_set_coordinator_host('127.0.0.1', {COORDINATOR})")
    for port in workers:
        psql(COORDINATOR, DATABASE, f"SELECT citus_add_node('127.0.0.1', {port})")


def play(bin_dir):
    url = f"postgres://postgres@127.0.0.1:{COORDINATOR}/{DATABASE}"
    env = {"DATABASE_URL": url, "RUST_LOG": "warn", "PATH": "/usr/bin:/bin"}
    subprocess.run([f"{bin_dir}/golf-server", "distribute"], env=env, check=True,
                   capture_output=True)
    psql(COORDINATOR, DATABASE, f"ALTER DATABASE {DATABASE} SET log_statement = 'all'")
    start = sum(1 for _ in open(LOG, errors="replace"))
    server = subprocess.Popen(
        [f"{bin_dir}/golf-server", "serve"],
        env={**env, "GOLF_BIND": f"127.0.0.1:{PORT}", "GOLF_RATE_LIMIT_PER_MIN": "0",
             "GOLF_READ_RATE_LIMIT_PER_MIN": "0"},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{PORT}"
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{base}/readyz")
                break
            except OSError:
                time.sleep(0.1)
        subprocess.run([f"{bin_dir}/golf-loadgen", "--url", base, "--quiet", "--mode", "moves",
                        "--accounts", "--games", "1", "--seats", "2", "--holes", "1",
                        "--total-games", "1"], check=True, capture_output=True)
        for path in ["/v1/games?limit=10", "/v1/leaderboard"]:
            urllib.request.urlopen(base + path).read()
        time.sleep(2)
    finally:
        server.terminate()
        server.wait()
        psql(COORDINATOR, DATABASE, f"ALTER DATABASE {DATABASE} RESET log_statement")
    with open(LOG, errors="replace") as log:
        return log.readlines()[start:]


def statements(lines):
    """Each distinct statement run on golf_plans, with the parameters of its first run."""
    found = {}
    text, params = None, None
    for line in lines + [""]:
        if text is not None and not line.startswith("\t") and "DETAIL:  parameters:" not in line:
            found.setdefault(text, params)
            text, params = None, None
        match = re.search(rf"@{DATABASE} LOG:  execute [^:]*: (.*)", line)
        if match:
            text, params = match.group(1), None
        elif text is not None and line.startswith("\t"):
            text += " " + line.strip()
        elif text is not None and "DETAIL:  parameters:" in line:
            params = re.findall(r"\$\d+ = (NULL|'(?:[^']|'')*')", line)
    return found


def explain(text, params):
    args = ", ".join(params or [])
    sql = f"PREPARE p AS {text}; EXPLAIN (COSTS OFF) EXECUTE p{f'({args})' if args else ''};"
    return psql(COORDINATOR, DATABASE, sql, quiet=True)


def summary(plan):
    if plan is None:
        return "not explained (see --full)"
    if "Citus INSERT ... SELECT" in plan and "Task Count" not in plan:
        return "rows made on the coordinator, each sent to its shard"
    nodes = sorted(set(re.findall(r"port=(\d+)", plan)))
    tasks = [int(n) for n in re.findall(r"Task Count: (\d+)", plan)]
    subplans = plan.count("Distributed Subplan")
    if not tasks:
        return "coordinator only (no distributed table)"
    kind = "router" if tasks == [1] and not subplans else \
        f"{subplans} subplans" if subplans else "multi-shard"
    return f"{kind}; task counts {tasks}; nodes {', '.join(nodes)}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--bin", default="target/debug")
    args = parser.parse_args()
    fresh_database()
    found = statements(play(args.bin))
    for text, params in found.items():
        if text.startswith(("SELECT pg_advisory", "SELECT version", "SELECT current_database",
                            "SELECT EXISTS", "CREATE", "SELECT pg_notify", "LISTEN")):
            continue
        plan = explain(text, params)
        print(f"- {text[:110]}\n    {summary(plan)}")
        if args.full:
            print(json.dumps(params), "\n", plan)


if __name__ == "__main__":
    main()
