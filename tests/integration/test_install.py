"""The library as a user gets it: `make install` into a
prefix, the examples built with pkg-config from that prefix (shared, and
static with the dependencies the .pc file names), answering through a
running daemon; the event-loop example learns of the daemon's death from
its descriptor."""
import os
import subprocess
import time

import pytest

from hg import BUILD, ROOT, memif_daemon, run, udp_roundtrip

SAN = "-fsanitize=address,undefined" if "asan" in BUILD else ""


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    """Hourglass installed under a fresh prefix, and the examples built
    against it: {prefix, bin dir of the examples, env to run them}."""
    root = tmp_path_factory.mktemp("install")
    pre, out = root / "usr", root / "examples"
    out.mkdir()
    run("make", "-s", "-C", ROOT, "install", f"PREFIX={pre}",
        f"BUILD={os.path.relpath(BUILD, ROOT)}", *(["SAN=1"] if SAN else []))
    env = dict(os.environ, PKG_CONFIG_PATH=str(pre / "lib" / "pkgconfig"))
    cflags = f"-O2 -g {SAN}".strip()
    run("make", "-s", "-C", os.path.join(ROOT, "examples"), f"OUT={out}",
        f"CFLAGS={cflags}", f"LDFLAGS={SAN}", env=env)
    static = out / "static"
    static.mkdir()
    run("make", "-s", "-C", os.path.join(ROOT, "examples"), f"OUT={static}", "STATIC=1",
        f"CFLAGS={cflags}", f"LDFLAGS={SAN}", env=env)
    return pre, out, env


def test_the_installed_tree(prefix):
    pre, _, env = prefix
    lib = pre / "lib"
    soname = os.readlink(lib / "libhgclient.so")
    assert os.readlink(lib / soname).startswith("libhgclient.so.")
    assert (pre / "include" / "hourglass.h").exists()
    assert (pre / "lib" / "systemd" / "system" / "hourglassd.service").exists()
    assert (pre / "etc" / "hourglass" / "hourglass.conf").exists()
    static = run("pkg-config", "--static", "--libs", "hgclient", env=env).stdout
    assert "-lprotobuf-c" in static and "-lpthread" in static
    version = run(str(pre / "bin" / "hourglassd"), "--version").stdout.split()[-1]
    assert run("pkg-config", "--modversion", "hgclient", env=env).stdout.strip() == version


@pytest.mark.parametrize("kind", ["shared", "static"])
def test_an_example_built_with_pkg_config_answers(prefix, daemon, net, kind):
    pre, out, _ = prefix
    exe = out / "echo" if kind == "shared" else out / "static" / "echo"
    port = 9810 if kind == "shared" else 9811
    daemon.hgctl("tenant", "add", f"ex{kind}", "--ports", str(port))
    env = dict(os.environ, HG_CTL=daemon.app_ctl, LD_LIBRARY_PATH=str(pre / "lib"))
    app = subprocess.Popen([str(exe), f"ex{kind}", str(port), "20"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        first = app.stdout.readline()
        assert first.startswith("echo: libhgclient "), first + app.stdout.read()
        s = net.socket()
        assert udp_roundtrip(s, port, b"from an installed app") == b"from an installed app"
        s.close()
    finally:
        app.terminate()
        app.wait(10)
    if kind == "shared":     # the linker found the library by its soname
        ldd = run("ldd", str(exe), env=env).stdout
        assert f"{pre}/lib/libhgclient.so." in ldd, ldd
    daemon.hgctl("tenant", "del", f"ex{kind}")


def test_an_event_loop_learns_the_daemon_died(prefix):
    """epoll_echo waits in epoll_wait with no timeout; killing the daemon
    makes its descriptor readable and hg_ctx_arm return -ENOTCONN."""
    pre, out, _ = prefix
    d = memif_daemon(f"{os.getpid() % 10000}ev")
    app = None
    try:
        d.hgctl("tenant", "add", "loop", "--ports", "9820")
        env = dict(os.environ, HG_CTL=d.app_ctl, LD_LIBRARY_PATH=str(pre / "lib"))
        app = subprocess.Popen([str(out / "epoll_echo"), "loop", "9820"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert "epoll_echo: tenant loop" in app.stdout.readline()
        time.sleep(0.3)
        d.proc.kill()
        d.proc.wait(10)
        rest, _ = app.communicate(timeout=5)
        assert app.returncode == 0, rest
        assert "hourglassd went away" in rest, rest
    finally:
        if app is not None and app.poll() is None:
            app.kill()
            app.wait()
        d.stop()
