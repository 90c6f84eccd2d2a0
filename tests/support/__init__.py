"""Real parts for tests: a Redis server, loopback servers that play remote APIs, fisk fixture binaries."""
