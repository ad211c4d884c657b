"""Training runs: launch and follow Hosted Training (`prime train`) and local prime-rl runs."""
