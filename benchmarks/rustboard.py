"""rustboard (``tensorboard-data-server``) as a benchmark baseline: its CPU to load a log directory.

The server loads in the background after it starts; the scalars are read back over its gRPC API
(tensorboard's ``data_provider`` stubs) until it holds as many points as rltop read, then its own
CPU time (user+sys, from /proc) is taken. ``--checksum`` makes it verify every record as rltop does
(its default verifies only records that fail to parse).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")


def _server_binary() -> Path | None:
    try:
        import tensorboard_data_server
    except ImportError:
        return None
    binary = Path(tensorboard_data_server.__file__).parent / "bin" / "server"
    return binary if binary.exists() else None


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _count_points(stub, pb) -> int:
    plugin = pb.PluginFilter(plugin_name="scalars")
    listing = stub.ListScalars(pb.ListScalarsRequest(experiment_id="", plugin_filter=plugin))
    runs = {run.run_name: [tag.tag_name for tag in run.tags] for run in listing.runs}
    if not runs:
        return 0
    request = pb.ReadScalarsRequest(
        experiment_id="",
        plugin_filter=plugin,
        run_tag_filter=pb.RunTagFilter(runs=pb.RunFilter(names=list(runs))),
        downsample=pb.Downsample(num_points=1 << 30),
    )
    reply = stub.ReadScalars(request)
    return sum(len(tag.data.step) for run in reply.runs for tag in run.tags)


def rustboard_load(path: Path, expected: int | None, checksum: bool = False, timeout: float = 900) -> dict:
    """Figures of one rustboard load of ``path`` (the same keys as bench_load's readers)."""
    binary = _server_binary()
    if binary is None:
        raise SystemExit("rustboard: pip install tensorboard-data-server")
    import grpc
    from tensorboard.data.proto import data_provider_pb2 as pb
    from tensorboard.data.proto import data_provider_pb2_grpc as pb_grpc

    with tempfile.TemporaryDirectory() as scratch:
        port_file = Path(scratch) / "port"
        command = [
            str(binary),
            "--logdir",
            str(path),
            "--port",
            "0",
            "--port-file",
            str(port_file),
            "--reload",
            "once",
            "--samples-per-plugin",
            "scalars=all",
            "--die-after-stdin",
        ]
        if checksum:
            command.append("--checksum")
        started = time.perf_counter()
        server = subprocess.Popen(command, stdin=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            while not (port_file.exists() and port_file.read_text().strip()):
                time.sleep(0.01)
            channel = grpc.insecure_channel(
                f"localhost:{port_file.read_text().strip()}",
                options=[("grpc.max_receive_message_length", (1 << 31) - 1)],
            )
            stub = pb_grpc.TensorBoardDataProviderStub(channel)
            count = last = -1
            while time.perf_counter() - started < timeout:
                count = _count_points(stub, pb)
                if count and (count == expected or (expected is None and count == last)):
                    break
                last = count
                time.sleep(0.2)
            cpu = _cpu_seconds(server.pid)
            wall = time.perf_counter() - started
            rss = _rss_mb(server.pid)
            channel.close()
        finally:
            server.stdin.close()
            server.kill()
            server.wait()
    return {
        "count": count,
        "import": 0.0,
        "load": wall,
        "load_cpu": cpu,
        "cpu": cpu,
        "rss_mb": rss,
        "held": None,
        "process_wall": wall,
    }
