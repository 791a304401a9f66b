//! golf-server
