import pytest

from conftest import run_pes


@pytest.mark.parametrize("n", [2, 4])
def test_global_exit_ends_the_job_with_its_status(n):
    out = run_pes("global_exit.py", n, expect_rc=3).stdout
    assert "unreachable" not in out, out


@pytest.mark.parametrize("n", [2, 4])
def test_waits_release_the_gil(n):
    out = run_pes("gil.py", n, timeout=60).stdout
    assert out.count("gil ok") == n, out


@pytest.mark.parametrize("n", [2, 4])
def test_a_blocked_thread_leaves_other_threads_calls_alone(n):
    out = run_pes("threads.py", n, timeout=60).stdout
    assert out.count("threads ok") == n, out


def test_ctrl_c_ends_a_blocking_wait():
    out = run_pes("interrupt.py", 1, timeout=60).stdout
    assert "interrupt ok" in out, out


def test_library_messages_leave_python_when_the_interpreter_exits():
    out = run_pes("logger_at_exit.py", 2, env={"SHMEM_LOG_LEVEL": ""}).stdout
    # while Python runs, the Python logger gets the library's messages
    assert out.count("PYTHON LOGGER") == 2 and "98" in out, out
    # once the interpreter exits, they go to stderr (merged into this output) instead
    assert out.count("exit-time message issued") == 2, out
    assert "99" in out and not any("PYTHON LOGGER" in l and "99" in l for l in out.splitlines()), out


@pytest.mark.parametrize("phase,n,transport", [("before", 1, "auto"), ("after", 2, "auto"), ("after", 2, "ucx")])
def test_every_function_survives_bad_input(phase, n, transport):
    env = {"ACLSHMEM_TRANSPORT": "ucx", "UCX_TLS": "tcp"} if transport == "ucx" else None
    out = run_pes("bad_input.py", n, phase, env=env).stdout
    assert out.count("bad input ok %s" % phase) == n, out[-3000:]
