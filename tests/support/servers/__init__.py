"""Real servers the tests start on localhost (installed by `make test`)."""
