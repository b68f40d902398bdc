"""The driver of the two-node test (run by test_rllib_cluster.py inside the cluster's namespace):
connect to ADDRESS, train PPO with 2 env runners, print one JSON line of what happened where."""

from __future__ import annotations

import json
import sys

import ray
from bridge.adapters.rllib import train_iteration
from bridge.adapters.rllib.train import config_for


def main(address: str) -> None:
    ray.init(address=address, log_to_driver=False)
    config = config_for(
        "envbridge/GridWorld-v0", env_runners=2, train_batch_size_per_learner=400, minibatch_size=64, num_epochs=2
    ).env_runners(num_cpus_per_env_runner=1)  # one 1-CPU runner per 1-CPU node
    algo = config.build_algo()
    try:
        where = algo.env_runner_group.foreach_env_runner(
            lambda r: (ray.get_runtime_context().get_node_id(), ray.util.get_node_ip_address()),
            local_env_runner=False,
        )
        steps = [int(train_iteration(algo)["env_runners"]["num_env_steps_sampled"]) for _ in range(2)]
    finally:
        algo.stop()
    nodes = [(n["NodeID"], n["NodeManagerAddress"], n["Resources"].get("CPU")) for n in ray.nodes() if n["Alive"]]
    print("RESULT " + json.dumps({"runners": where, "nodes": nodes, "steps": steps}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
