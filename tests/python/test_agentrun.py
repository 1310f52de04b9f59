"""Tests of contrib/python/agentrun.py (unittest, standard library only).

The sandbox tests need root and a built agentrun: AGENTRUN_BINARY names it (default: the
agentrun at the top of the tree).  Each test class uses a private --root and a host policy
whose audit dir is in a temp dir, so nothing is written to /var/log/agentrun.
"""

import glob
import os
import shutil
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "contrib", "python"))

import agentrun  # noqa: E402

BINARY = os.environ.get("AGENTRUN_BINARY", os.path.join(TOP, "agentrun"))


class CommandLineTest(unittest.TestCase):
    """build_command: no root, no sandbox."""

    def test_code_runs_with_python3(self):
        cmd = agentrun.build_command("print(1)", "/r.json", binary="ar")
        self.assertEqual(cmd, ["ar", "sandbox", "--json", "/r.json", "--", "python3", "-c",
                               "print(1)"])

    def test_argv_and_options(self):
        cmd = agentrun.build_command(["sh", "-c", "true"], "/r.json", timeout=1.5, memory=64 << 20,
                                     pids=10, cpus=0.5, env={"A": "1"}, binary=["sudo", "ar"],
                                     policy="/p.json", root="/st", workdir="/w")
        self.assertEqual(cmd, [
            "sudo", "ar", "--root", "/st", "--policy", "/p.json", "sandbox", "--json", "/r.json",
            "--timeout", "1500ms", "--memory", str(64 << 20), "--pids", "10", "--cpus", "0.5",
            "--env", "A=1", "--workdir", "/w", "--", "sh", "-c", "true"])

    def test_strings_pass_as_they_are(self):
        cmd = agentrun.build_command("x", "/r", timeout="2m", memory="512m")
        self.assertIn("2m", cmd)
        self.assertIn("512m", cmd)

    def test_bad_arguments(self):
        with self.assertRaises(TypeError):
            agentrun.build_command([], "/r")
        with self.assertRaises(ValueError):
            agentrun.build_command("x", "/r", timeout=0)
        with self.assertRaises(ValueError):
            agentrun.build_command("x", "/r", env={"A=B": "1"})

    def test_files_must_stay_inside(self):
        for name in ("/etc/x", "../x", "a/../../x"):
            with self.assertRaises(ValueError, msg=name):
                agentrun.run("pass", files={name: "x"}, binary="/nonexistent/agentrun")

    def test_missing_binary(self):
        with self.assertRaises(agentrun.AgentrunError):
            agentrun.run("pass", binary="/nonexistent/agentrun")


@unittest.skipUnless(os.geteuid() == 0, "the sandbox needs root")
@unittest.skipUnless(os.access(BINARY, os.X_OK), "agentrun is not built: " + BINARY)
class SandboxTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="agentrun-pytest-")
        cls.root = os.path.join(cls.tmp, "state")
        cls.audit = os.path.join(cls.tmp, "audit")
        os.mkdir(cls.root)
        os.mkdir(cls.audit)
        cls.policy = os.path.join(cls.tmp, "policy.json")
        with open(cls.policy, "w") as f:
            f.write('{"audit": {"enabled": true, "dir": "%s"}}\n' % cls.audit)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_box(self, job, **kw):
        return agentrun.run(job, binary=BINARY, policy=self.policy, root=self.root, **kw)

    def tearDown(self):
        # nothing of the sandbox is left under its state root
        self.assertEqual(os.listdir(self.root), [])

    def test_success(self):
        r = self.run_box("print(6*7)")
        self.assertEqual(r.stdout, "42\n")
        self.assertEqual(r.stderr, "")
        self.assertEqual(r.exit_code, 0)
        self.assertTrue(r.ok)
        self.assertFalse(r.timed_out)
        self.assertFalse(r.oom_killed)
        self.assertRegex(r.id, r"^sb-[0-9a-f]{16}$")
        self.assertEqual(r.audit_log, os.path.join(self.audit, r.id + ".jsonl"))
        self.assertTrue(os.path.exists(r.audit_log))
        self.assertGreater(r.wall_s, 0)
        self.assertGreaterEqual(r.cpu_s, 0)
        self.assertGreater(r.mem_peak_bytes, 0)

    def test_error(self):
        r = self.run_box("import sys\nprint('before')\n1/0")
        self.assertEqual(r.exit_code, 1)
        self.assertFalse(r.ok)
        self.assertEqual(r.stdout, "before\n")
        self.assertIn("ZeroDivisionError", r.stderr)
        self.assertFalse(r.timed_out)

    def test_exit_code(self):
        r = self.run_box(["sh", "-c", "echo oops >&2; exit 3"])
        self.assertEqual(r.exit_code, 3)
        self.assertEqual(r.stderr, "oops\n")

    def test_timeout(self):
        t0 = time.monotonic()
        r = self.run_box("import time\nprint('start', flush=True)\ntime.sleep(30)", timeout=1)
        self.assertLess(time.monotonic() - t0, 3)
        self.assertTrue(r.timed_out)
        self.assertEqual(r.exit_code, 137)
        self.assertEqual(r.signal, 9)
        self.assertEqual(r.stdout, "start\n")

    def test_files_visible(self):
        r = self.run_box(
            ["python3", "main.py"],
            files={"main.py": "import os, helper\nprint(os.getcwd(), helper.VALUE, "
                              "open('data/in.txt').read())\nopen('out.txt', 'w').write('x')\n",
                   "helper.py": "VALUE = 7\n",
                   "data/in.txt": b"bytes-in"})
        self.assertEqual(r.exit_code, 0, r.stderr)
        self.assertEqual(r.stdout, "/workspace 7 bytes-in\n")

    def test_memory_limit(self):
        r = self.run_box("b = bytearray(200 << 20)\nb[::4096] = b'x' * len(b[::4096])\nprint('no')",
                         memory="64m")
        self.assertTrue(r.oom_killed)
        self.assertEqual(r.exit_code, 137)
        self.assertEqual(r.stdout, "")

    def test_env_and_no_host_env(self):
        os.environ["AGENTRUN_PY_SECRET"] = "hunter2"
        try:
            r = self.run_box("import os\nprint(sorted(os.environ))\nprint(os.environ['GIVEN'])",
                             env={"GIVEN": "yes"})
        finally:
            del os.environ["AGENTRUN_PY_SECRET"]
        self.assertEqual(r.exit_code, 0, r.stderr)
        self.assertNotIn("AGENTRUN_PY_SECRET", r.stdout)
        self.assertTrue(r.stdout.endswith("yes\n"))

    def test_stdin(self):
        r = self.run_box("import sys\nprint(sys.stdin.read().upper())", stdin="hello")
        self.assertEqual(r.stdout, "HELLO\n")

    def test_no_network(self):
        # the kernel's list of interfaces; no packet is sent
        r = self.run_box("print([l.split(':')[0].strip() for l in open('/proc/net/dev')][2:])")
        self.assertEqual(r.stdout, "['lo']\n")

    def test_agentrun_failure_raises(self):
        with self.assertRaises(agentrun.AgentrunError) as cm:
            self.run_box(["/no/such/program"])
        self.assertEqual(cm.exception.exit_code, 125)
        self.assertIn("/no/such/program", cm.exception.stderr)
        with self.assertRaises(agentrun.AgentrunError):
            self.run_box("pass", memory="lots")

    def test_audit_log_has_the_exec(self):
        r = self.run_box(["sh", "-c", "ls / >/dev/null"])
        with open(r.audit_log) as f:
            lines = f.read()
        self.assertIn('"argv":["ls","/"]', lines)

    def test_no_leftover_tmp_dirs(self):
        before = set(glob.glob(os.path.join(tempfile.gettempdir(), "agentrun-*")))
        self.run_box("pass", files={"a": "b"})
        after = set(glob.glob(os.path.join(tempfile.gettempdir(), "agentrun-*")))
        self.assertEqual(after - before, set())


if __name__ == "__main__":
    unittest.main()
