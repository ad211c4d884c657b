from pair_arith.taskset import PairArithEnv, PairArithEnvConfig, PairArithTaskset

__all__ = ["PairArithEnv", "PairArithEnvConfig", "PairArithTaskset"]
