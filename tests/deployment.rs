//! The deployment files: Docker does not run on our machines, so these tests check what can be
//! checked without it.

use serde_yaml::Value;

fn compose() -> Value {
    serde_yaml::from_str(include_str!("../docker-compose.yml")).expect("docker-compose.yml parses")
}

#[test]
fn compose_runs_postgres_with_a_health_check_and_a_named_volume() {
    let compose = compose();
    let db = &compose["services"]["db"];
    assert!(db["image"].as_str().unwrap().starts_with("postgres:"));
    assert!(db["healthcheck"]["test"].is_sequence());
    let volume = db["volumes"][0].as_str().unwrap();
    let name = volume.split(':').next().unwrap();
    assert!(
        compose["volumes"].as_mapping().unwrap().contains_key(name),
        "{name} is a named volume"
    );
}

#[test]
fn compose_server_waits_for_a_healthy_database_and_exposes_8080() {
    let compose = compose();
    let server = &compose["services"]["server"];
    assert_eq!(server["build"].as_str(), Some("."));
    assert_eq!(
        server["depends_on"]["db"]["condition"].as_str(),
        Some("service_healthy")
    );
    assert!(
        server["ports"]
            .as_sequence()
            .unwrap()
            .iter()
            .any(|port| port.as_str().unwrap().ends_with(":8080"))
    );
    let url = server["environment"]["DATABASE_URL"].as_str().unwrap();
    assert!(
        url.starts_with("postgres://") && url.contains("@db:"),
        "{url}"
    );
}

#[test]
fn dockerfile_is_multi_stage_runs_as_non_root_and_is_built_as_the_readme_says() {
    let dockerfile = include_str!("../Dockerfile");
    let stages = dockerfile
        .lines()
        .filter(|line| line.starts_with("FROM "))
        .count();
    assert_eq!(stages, 2, "a build stage and a runtime stage");
    let user = dockerfile
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("USER "))
        .expect("the runtime stage names a user");
    assert_ne!(user.trim(), "root");
    assert!(dockerfile.contains("cargo build --release --locked"));
    assert!(dockerfile.contains("EXPOSE 8080"));

    let build_command = "docker build -t golf-server .";
    assert!(dockerfile.contains(build_command));
    assert!(include_str!("../README.md").contains(build_command));
}
