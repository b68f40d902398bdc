"""A real two-node Ray cluster on loopback: a head and a second raylet (1 CPU each), the driver
connects with ``ray.init(address=...)``, PPO trains with one env runner on each node.

The cluster lives in its own network, PID and mount namespaces (``unshare``): only ``lo`` exists
there, so every Ray process binds to 127.0.0.1 (Ray replaces a loopback address by the host's
routable one when the host has one); Ray's folder (its sessions, sockets and logs: ``ray`` in
``$RAY_TMPDIR``, else in ``$TMPDIR``, which tests/conftest.py sets to a folder short enough for
Ray's socket paths) is a private tmpfs -- only that folder -- so ``ray start`` leaves no
``ray_current_cluster`` behind for a later ``ray.init()``, and nothing in /tmp; and every process
the test started is in that PID namespace, which the kernel empties when the test's ``unshare``
ends -- normally after ``ray stop`` (which there sees only this cluster), on a failure, or when the
timeout kills it.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys

import pytest
from support import require

require("ray")
require("torch")

pytestmark = pytest.mark.slow
HERE = os.path.dirname(os.path.abspath(__file__))
PORT = 6390

SCRIPT = """
set -eu
mkdir -p "{ray_dir}" && mount -t tmpfs tmpfs "{ray_dir}"
ip link set lo up
export RAY_USAGE_STATS_ENABLED=0 RAY_AUTH_MODE=token RAY_AUTH_TOKEN={token} PYTHONPATH={tests}
"{ray}" start --head --node-ip-address 127.0.0.1 --port {port} --num-cpus 1 --include-dashboard=false \\
    --disable-usage-stats > "{ray_dir}/head.log" 2>&1 || {{ cat "{ray_dir}/head.log"; exit 10; }}
"{ray}" start --address 127.0.0.1:{port} --node-ip-address 127.0.0.1 --num-cpus 1 --disable-usage-stats \\
    > "{ray_dir}/worker.log" 2>&1 || {{ cat "{ray_dir}/worker.log"; exit 11; }}
set +e
"{python}" "{driver}" 127.0.0.1:{port}
rc=$?
echo "LISTENING $(ss -Hltn | awk '{{print $4}}' | tr '\\n' ' ')"
"{ray}" stop --force > /dev/null 2>&1
exit $rc
"""


def test_ppo_trains_on_a_two_node_loopback_cluster(tmp_path):
    missing = [tool for tool in ("unshare", "ip", "ss") if shutil.which(tool) is None]
    assert not missing, f"the cluster test needs {missing} (util-linux, iproute2)"
    bin_dir = os.path.dirname(sys.executable)
    script = SCRIPT.format(
        token=secrets.token_hex(32),
        tests=os.path.dirname(os.path.dirname(HERE)),
        ray=os.path.join(bin_dir, "ray"),
        python=sys.executable,
        driver=os.path.join(HERE, "cluster_driver.py"),
        port=PORT,
        ray_dir=os.path.join(os.environ.get("RAY_TMPDIR") or os.environ["TMPDIR"], "ray"),
    )
    # --kill-child: if this test's unshare dies (timeout), the namespace's init and all in it die too
    command = ["unshare", "--net", "--pid", "--fork", "--kill-child", "--mount-proc", "bash", "-c", script]
    # cwd: Ray puts the driver's working directory first on its workers' sys.path (a checkout's
    # ./bridge source folder would shadow the installed package)
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    result = json.loads(line[len("RESULT ") :])
    assert len(result["nodes"]) == 2 and {n[1] for n in result["nodes"]} == {"127.0.0.1"}
    assert [n[2] for n in result["nodes"]] == [1.0, 1.0]
    runner_nodes = {node for node, _ in result["runners"]}
    assert runner_nodes == {n[0] for n in result["nodes"]}  # one env runner on each node
    assert {ip for _, ip in result["runners"]} == {"127.0.0.1"}
    assert all(steps >= 400 for steps in result["steps"])
    listening = next(x for x in done.stdout.splitlines() if x.startswith("LISTENING ")).split()[1:]
    assert listening and all(a.startswith(("127.0.0.1:", "[::ffff:127.0.0.1]:")) for a in listening), listening
