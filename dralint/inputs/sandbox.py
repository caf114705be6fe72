"""Start the programs that render charts and kustomizations, contained. Every renderer child starts here.

A chart or a kustomization comes from whoever wrote the pull request, and rendering executes it:
templates loop, read files and fetch schemas. So the child runs
- with a wall-clock timeout, after which its whole process group is killed;
- under resource limits: address space and data (memory), CPU seconds, new processes, file size
  (its stdout and stderr are files, so this bounds them too) and no core dumps;
- with an empty environment plus what a renderer needs: ``HOME``, the XDG, Helm and kubectl
  settings point into a fresh empty directory, and ``PATH`` is a directory holding only a link to the
  renderer — no git, no shell, nothing to fetch with;
- with stdin from /dev/null (or the request of the Helm SDK child);
- in an empty network namespace when the OS lets us make one (as root: a new network namespace;
  otherwise a new user namespace that owns one). When neither is allowed the child shares the
  network, its proxies point at a closed port, and the refusal of URL-taking fields before
  rendering is what keeps it offline; ``Outcome.network`` says which case happened.

Nothing else in dralint starts a process, so a test can watch or replace `run_sandboxed` alone.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import math
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

TIMEOUT_ENV = "DRALINT_RENDER_TIMEOUT"
DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 3600.0
#: a chart renders in tens of MB, but the Go runtime of helm and kubectl reserves a few hundred MB
#: of address space at start (it aborts at 512 MB)
MEMORY_BYTES = 2 << 30
#: the most a child may write to one file, its rendered output included
OUTPUT_BYTES = 64 << 20
#: how much of the child's stderr is kept: its messages come first, a Go crash dump after them
STDERR_BYTES = 64 << 10
#: new threads a child may start on top of all those running on the machine; RLIMIT_NPROC counts
#: every thread of the user, so a fixed small number would fail on a busy desktop
EXTRA_TASKS = 256

#: a closed port on the loopback interface: a client that honours proxies fails at once
NO_NETWORK = "http://127.0.0.1:9"

#: how the child was cut off from the network
NETNS = "netns"  # its own empty network namespace (root)
USERNS = "userns+netns"  # a user namespace owning an empty network namespace (unprivileged)
SHARED = "shared"  # neither was allowed: the host network, behind closed proxies only

_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000


class SandboxError(Exception):
    """The child could not start, or did not finish in time."""


@dataclass(frozen=True)
class Outcome:
    argv: tuple[str, ...]
    returncode: int  # negative: killed by that signal
    stdout: bytes
    stderr: bytes  # the first STDERR_BYTES
    network: str  # NETNS, USERNS or SHARED

    def failure(self) -> str | None:
        """Why the run failed, in words, or None when it succeeded."""
        if len(self.stdout) >= OUTPUT_BYTES:
            return f"its output reached the {OUTPUT_BYTES:,}-byte limit"
        if self.returncode == 0:
            return None
        said = self.stderr.decode("utf-8", "replace").strip()
        if self.returncode < 0:
            sig = -self.returncode
            why = {int(signal.SIGXCPU): " (the CPU time limit)", int(signal.SIGXFSZ): " (the file size limit)",
                   int(signal.SIGKILL): " (past the CPU time limit, or out of memory)"}.get(sig, "")
            try:
                name = signal.Signals(sig).name
            except ValueError:
                name = f"signal {sig}"
            return f"killed by {name}{why}" + (f": {said}" if said else "")
        return said or f"exit code {self.returncode}"


def timeout_seconds() -> float:
    """The wall-clock limit of one render: ``DRALINT_RENDER_TIMEOUT`` seconds, else the default."""
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 < value <= MAX_TIMEOUT:  # NaN fails this too
        raise SandboxError(f"{TIMEOUT_ENV}={raw!r}: expected a number of seconds, above 0 and at most "
                           f"{MAX_TIMEOUT:g}")
    return value


def environment(binary: str, work: Path) -> dict[str, str]:
    """The whole environment of a child, in fresh directories under ``work``: nothing is copied
    from ours (tokens, HOME, kubeconfig, PATH)."""
    names = ("home", "bin", "config", "cache", "data", "state", "plugins", "tmp")
    dirs = {name: work / name for name in names}
    for d in dirs.values():
        d.mkdir()
    (dirs["bin"] / os.path.basename(binary)).symlink_to(binary)
    env = {
        "PATH": str(dirs["bin"]),
        "HOME": str(dirs["home"]),
        "TMPDIR": str(dirs["tmp"]),
        "XDG_CONFIG_HOME": str(dirs["config"]), "XDG_CACHE_HOME": str(dirs["cache"]),
        "XDG_DATA_HOME": str(dirs["data"]), "XDG_STATE_HOME": str(dirs["state"]),
        # no repositories, registries or plugins from the user's Helm setup
        "HELM_CONFIG_HOME": str(dirs["config"]), "HELM_CACHE_HOME": str(dirs["cache"]),
        "HELM_DATA_HOME": str(dirs["data"]), "HELM_PLUGINS": str(dirs["plugins"]),
        "KUBECONFIG": str(dirs["config"] / "kubeconfig"),  # does not exist: no cluster to ask
        "HTTP_PROXY": NO_NETWORK, "HTTPS_PROXY": NO_NETWORK, "ALL_PROXY": NO_NETWORK,
        "http_proxy": NO_NETWORK, "https_proxy": NO_NETWORK, "all_proxy": NO_NETWORK,
    }
    if shutil.which("git", path=env["PATH"]) is not None:
        raise SandboxError(f"refusing to run {binary}: git would be reachable on the PATH of the renderer")
    return env


def _running_tasks() -> int | None:
    """Threads running on the whole machine (an upper bound for the user's), from /proc/loadavg."""
    try:
        with open("/proc/loadavg", encoding="ascii") as fh:
            return int(fh.read().split()[3].split("/")[1])
    except (OSError, ValueError, IndexError):
        return None


def limits(timeout: float) -> list[tuple[int, int, int]]:
    """(resource, soft, hard) for the child; a limit already lower than ours is kept."""
    import resource

    cpu = math.ceil(timeout)
    wanted = [
        (resource.RLIMIT_AS, MEMORY_BYTES, MEMORY_BYTES), (resource.RLIMIT_DATA, MEMORY_BYTES, MEMORY_BYTES),
        # SIGXCPU at the soft limit (Go ignores it), SIGKILL a second later
        (resource.RLIMIT_CPU, cpu, cpu + 1),
        (resource.RLIMIT_FSIZE, OUTPUT_BYTES, OUTPUT_BYTES), (resource.RLIMIT_CORE, 0, 0),
    ]
    tasks = _running_tasks()
    if tasks is not None:
        wanted.append((resource.RLIMIT_NPROC, tasks + EXTRA_TASKS, tasks + EXTRA_TASKS))
    out = []
    for res, soft, hard in wanted:
        ours = resource.getrlimit(res)[1]
        if ours != resource.RLIM_INFINITY:
            soft, hard = min(soft, ours), min(hard, ours)
        out.append((res, soft, hard))
    return out


@functools.cache
def _unshare() -> Callable[[int], int] | None:
    # looked up before the fork: the child between fork and exec should only call it
    try:
        fn = ctypes.CDLL(None, use_errno=True).unshare
    except (OSError, AttributeError):  # not Linux
        return None
    fn.argtypes = [ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


def _contain(rlimits: list[tuple[int, int, int]], report_fd: int) -> Callable[[], None]:
    """What the child does between fork and exec."""
    import resource

    unshare = _unshare()

    def enter() -> None:
        state = SHARED
        if unshare is not None:
            if unshare(_CLONE_NEWNET) == 0:
                state = NETNS
            elif unshare(_CLONE_NEWUSER | _CLONE_NEWNET) == 0:
                state = USERNS
        os.write(report_fd, state.encode("ascii"))
        # last: with the address space limited, this process (a copy of ours) can hardly allocate
        for res, soft, hard in rlimits:
            # a limit this platform does not have: the others still hold
            with contextlib.suppress(OSError, ValueError):
                resource.setrlimit(res, (soft, hard))

    return enter


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Kill the child's process group (it leads its own session) and reap the child."""
    with contextlib.suppress(OSError):  # already gone
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def run_sandboxed(argv: Sequence[str], *, cwd: str | Path, timeout: float, stdin: bytes | None = None) -> Outcome:
    """Run ``argv`` contained (see the module docstring) and return what it wrote.

    Raises `SandboxError` when it cannot start or runs out of time; any other failure of the child
    is in the `Outcome` (see `Outcome.failure`).
    """
    if os.name != "posix":
        raise SandboxError("rendering runs in a contained child process, which needs a POSIX system")
    found = argv[0] if os.path.isabs(argv[0]) else shutil.which(argv[0])
    if found is None or not os.path.isfile(found):
        raise SandboxError(f"cannot run {argv[0]}: not found")
    binary = os.path.abspath(found)  # the child starts elsewhere (cwd), and PATH holds a link to it
    with tempfile.TemporaryDirectory(prefix="dralint-sandbox-") as tmp:
        work = Path(tmp)
        env = environment(binary, work)
        request = work / "stdin"
        request.write_bytes(stdin or b"")
        read_fd, write_fd = os.pipe()
        try:
            with open(request if stdin is not None else os.devnull, "rb") as inp, \
                    open(work / "stdout", "wb") as out, open(work / "stderr", "wb") as err:
                try:
                    proc = subprocess.Popen(
                        [binary, *argv[1:]], cwd=cwd, env=env, stdin=inp, stdout=out, stderr=err,
                        start_new_session=True, preexec_fn=_contain(limits(timeout), write_fd),
                    )
                except (OSError, subprocess.SubprocessError) as e:
                    raise SandboxError(f"cannot run {argv[0]}: {e}") from e
                os.close(write_fd)
                write_fd = -1
                # written before exec, and Popen returns after exec: this does not block
                network = os.read(read_fd, 32).decode("ascii", "replace") or SHARED
                try:
                    returncode = proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    _stop(proc)
                    raise SandboxError(f"{os.path.basename(binary)} did not finish within {timeout:g}s "
                                       "and was stopped") from None
                except BaseException:  # interrupted: leave nothing running
                    _stop(proc)
                    raise
        finally:
            os.close(read_fd)
            if write_fd >= 0:
                os.close(write_fd)
        with open(work / "stderr", "rb") as fh:
            stderr = fh.read(STDERR_BYTES)
        return Outcome(tuple(argv), returncode, (work / "stdout").read_bytes(), stderr, network)
