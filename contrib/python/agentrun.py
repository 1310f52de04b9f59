"""Run an AI agent's code in a disposable agentrun sandbox.

    import agentrun
    r = agentrun.run("print(6*7)", timeout=10, memory="256m")
    r.stdout       # '42\n'
    r.exit_code    # 0

A str is Python code, run with `python3 -c`; a list is an argv.  The box has no network,
a read-only root filesystem, no host environment and an unprivileged uid (65534); the
host policy (/etc/agentrun/policy.json) sets the defaults and the ceilings.  `files` are
written into a fresh directory that the job sees, read-write, as its working directory
/workspace.  The module calls `agentrun sandbox --json FILE ...` and needs nothing but the
standard library.  agentrun must run as root: from a non-root process, pass
binary=["sudo", "-n", "agentrun"].

run() returns a Result for every job, whatever its exit code; it raises AgentrunError
only when agentrun itself could not run the job (bad option, missing binary, policy).
"""

import dataclasses
import json
import os
import shutil
import subprocess
import tempfile
from typing import Dict, List, Mapping, Optional, Sequence, Union

__all__ = ["run", "Result", "AgentrunError", "build_command"]

JOB_UID = 65534  # the sandbox's default user
WORKSPACE = "/workspace"
# How long past the job's own deadline we wait for agentrun before we stop it.
_GRACE_S = 30


class AgentrunError(Exception):
    """agentrun could not run the job (its exit code 125, or no result at all)."""

    def __init__(self, message: str, exit_code: Optional[int] = None, stderr: str = ""):
        super().__init__(message)
        self.exit_code = exit_code
        self.stderr = stderr


@dataclasses.dataclass
class Result:
    stdout: str
    stderr: str
    exit_code: int  # the job's; 128+N when killed by signal N; 137 on timeout or OOM kill
    timed_out: bool = False
    oom_killed: bool = False
    wall_s: float = 0.0
    cpu_s: float = 0.0
    mem_peak_bytes: Optional[int] = None
    audit_log: Optional[str] = None  # the JSON-lines log of every exec in the box
    id: Optional[str] = None
    signal: Optional[int] = None
    pids_peak: Optional[int] = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.oom_killed


def _duration(value: Union[int, float, str]) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value <= 0:
        raise ValueError("timeout must be a positive number of seconds, got %r" % (value,))
    return "%dms" % max(1, round(value * 1000))


def _size(value: Union[int, str]) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value <= 0:
        raise ValueError("memory must be a positive number of bytes, got %r" % (value,))
    return str(int(value))


def _job_argv(code_or_argv: Union[str, Sequence[str]]) -> List[str]:
    if isinstance(code_or_argv, str):
        return ["python3", "-c", code_or_argv]
    argv = list(code_or_argv)
    if not argv or not all(isinstance(a, str) for a in argv):
        raise TypeError("code_or_argv must be a str of Python code or a non-empty list of str")
    return argv


def build_command(
    code_or_argv: Union[str, Sequence[str]],
    json_path: str,
    timeout=None,
    memory=None,
    pids=None,
    cpus=None,
    env: Optional[Mapping[str, str]] = None,
    binary: Union[str, Sequence[str]] = "agentrun",
    policy: Optional[str] = None,
    root: Optional[str] = None,
    workdir: Optional[str] = None,
) -> List[str]:
    """The agentrun command line for one job (run() uses it; handy for logging)."""
    cmd = [binary] if isinstance(binary, str) else list(binary)
    if root is not None:
        cmd += ["--root", root]
    if policy is not None:
        cmd += ["--policy", policy]
    cmd += ["sandbox", "--json", json_path]
    if timeout is not None:
        cmd += ["--timeout", _duration(timeout)]
    if memory is not None:
        cmd += ["--memory", _size(memory)]
    if pids is not None:
        cmd += ["--pids", str(int(pids))]
    if cpus is not None:
        cmd += ["--cpus", str(cpus)]
    for key, value in (env or {}).items():
        if not key or "=" in key:
            raise ValueError("bad environment variable name %r" % (key,))
        cmd += ["--env", "%s=%s" % (key, value)]
    if workdir is not None:
        cmd += ["--workdir", workdir]
    return cmd + ["--"] + _job_argv(code_or_argv)


def _give_to_job(path: str) -> None:
    """The job (uid 65534) may change what we wrote for it."""
    if os.geteuid() == 0:
        os.chown(path, JOB_UID, JOB_UID)
    else:
        os.chmod(path, 0o777 if os.path.isdir(path) else 0o666)


def _write_files(workdir: str, files: Mapping[str, Union[str, bytes]]) -> None:
    for name, content in files.items():
        rel = os.path.normpath(name)
        if os.path.isabs(name) or rel == "." or rel == ".." or rel.startswith("../"):
            raise ValueError("files: %r must be a relative path inside the workspace" % (name,))
        path = os.path.join(workdir, rel)
        parent = workdir
        for part in rel.split(os.sep)[:-1]:
            parent = os.path.join(parent, part)
            if not os.path.isdir(parent):
                os.mkdir(parent)
                _give_to_job(parent)
        data = content.encode() if isinstance(content, str) else bytes(content)
        with open(path, "wb") as f:
            f.write(data)
        _give_to_job(path)


def _make_workdir(tmp: str) -> str:
    # tmp is 0700 and ours, so nobody else reaches the job's dir; the job sees only the dir.
    workdir = os.path.join(tmp, "workspace")
    os.mkdir(workdir)
    _give_to_job(workdir)
    return workdir


def _read_result(json_path: str) -> Optional[dict]:
    try:
        with open(json_path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _communicate(proc: subprocess.Popen, stdin: Optional[bytes], limit: Optional[float]):
    """(stdout, stderr, stopped): stopped when we had to stop agentrun past the limit."""
    try:
        out, err = proc.communicate(stdin, timeout=limit)
        return out, err, False
    except subprocess.TimeoutExpired:
        # SIGTERM makes agentrun kill the job and remove everything; SIGKILL only if it hangs.
        proc.terminate()
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        return out, err, True
    except BaseException:  # KeyboardInterrupt in the caller: the box goes too
        proc.terminate()
        proc.wait()
        raise


def run(
    code_or_argv: Union[str, Sequence[str]],
    timeout: Union[None, int, float, str] = None,
    memory: Union[None, int, str] = None,
    files: Optional[Mapping[str, Union[str, bytes]]] = None,
    pids: Optional[int] = None,
    cpus: Union[None, int, float, str] = None,
    env: Optional[Mapping[str, str]] = None,
    binary: Union[str, Sequence[str]] = "agentrun",
    policy: Optional[str] = None,
    root: Optional[str] = None,
    stdin: Union[None, str, bytes] = None,
) -> Result:
    """Run code (a str of Python) or an argv (a list) in a fresh sandbox.

    timeout: seconds (int/float) or an agentrun duration ("30s", "5m").
    memory: bytes (int) or a size ("512m").  pids, cpus: limits.  env: variables to set.
    files: {"name": "content"} written into /workspace, the job's working directory.
    binary: the agentrun executable, or an argv prefix such as ["sudo", "-n", "agentrun"].
    policy, root: agentrun's --policy and --root.  stdin: fed to the job.
    """
    tmp = tempfile.mkdtemp(prefix="agentrun-")
    try:
        json_path = os.path.join(tmp, "result.json")
        workdir = None
        if files:
            workdir = _make_workdir(tmp)
            _write_files(workdir, files)
        cmd = build_command(code_or_argv, json_path, timeout=timeout, memory=memory, pids=pids,
                            cpus=cpus, env=env, binary=binary, policy=policy, root=root,
                            workdir=workdir)
        limit = None
        if timeout is not None:
            limit = _GRACE_S + (timeout if not isinstance(timeout, str) else 24 * 3600)
        data = stdin.encode() if isinstance(stdin, str) else stdin
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE if data is not None else
                                    subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE)
        except OSError as e:
            raise AgentrunError("cannot start %s: %s" % (cmd[0], e)) from e
        out, err, stopped = _communicate(proc, data, limit)
        stdout = out.decode("utf-8", errors="replace")
        stderr = err.decode("utf-8", errors="replace")
        res = _read_result(json_path)
        if res is None:
            # no result: agentrun itself failed, and its message is on stderr
            msg = stderr.strip().splitlines()[-1] if stderr.strip() else "no result"
            raise AgentrunError("agentrun failed (exit %d): %s" % (proc.returncode, msg),
                                proc.returncode, stderr)
        return Result(
            stdout=stdout,
            stderr=stderr,
            exit_code=proc.returncode,
            timed_out=bool(res.get("timed_out")) or stopped,
            oom_killed=bool(res.get("oom_killed")),
            wall_s=float(res.get("wall_s") or 0.0),
            cpu_s=float(res.get("cpu_s") or 0.0),
            mem_peak_bytes=res.get("mem_peak_bytes"),
            audit_log=res.get("audit_log"),
            id=res.get("id"),
            signal=res.get("signal"),
            pids_peak=res.get("pids_peak"),
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _main(argv: List[str]) -> int:
    import argparse

    p = argparse.ArgumentParser(description="Run Python code in an agentrun sandbox.")
    p.add_argument("code", help="Python code, or an argv after --")
    p.add_argument("args", nargs="*")
    p.add_argument("--timeout")
    p.add_argument("--memory")
    p.add_argument("--binary", default=os.environ.get("AGENTRUN_BINARY", "agentrun"))
    a = p.parse_args(argv)
    job: Union[str, List[str]] = [a.code] + a.args if a.args else a.code
    r = run(job, timeout=a.timeout, memory=a.memory, binary=a.binary)
    print(r.stdout, end="")
    print(json.dumps(dataclasses.asdict(r), indent=2))
    return r.exit_code


if __name__ == "__main__":
    import sys

    sys.exit(_main(sys.argv[1:]))
