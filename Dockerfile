# Build: docker build -t golf-server .
# Stage 1 compiles the release binary; stage 2 is a small runtime image with a non-root user.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
COPY migrations ./migrations
COPY openapi ./openapi
COPY web ./web
RUN cargo build --release --locked --bin golf-server

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /var/lib/golf --create-home golf
COPY --from=build /src/target/release/golf-server /usr/local/bin/golf-server
USER golf
WORKDIR /var/lib/golf
ENV GOLF_BIND=0.0.0.0:8080 GOLF_LOG=json
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/golf-server"]
CMD ["serve"]
