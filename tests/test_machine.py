"""Machine facts recorded with benchmark rows: how much of a big allocation the kernel put on huge pages."""
from __future__ import annotations

from smtbench import machine


def test_huge_pages_share_and_warning(monkeypatch, capsys):
    seen = iter([100.0, 1124.0, 0.0, 64.0])
    monkeypatch.setattr(machine, "anon_huge_mib", lambda: next(seen))
    with machine.HugePages("table A", 1024 << 20) as a:
        pass
    assert a.mib == 1024.0 and a.share == 1.0
    assert capsys.readouterr().err == ""
    with machine.HugePages("table B", 1024 << 20) as b:
        pass
    assert b.mib == 64.0 and b.share == 0.0625
    err = capsys.readouterr().err
    assert "table B" in err and "only 64 of 1024 MiB" in err


def test_huge_pages_unknown_or_not_requested(monkeypatch, capsys):
    monkeypatch.setattr(machine, "anon_huge_mib", lambda: None)
    with machine.HugePages("x", 1 << 30) as h:
        pass
    assert h.mib is None and h.share is None
    seen = iter([0.0, 0.0])
    monkeypatch.setattr(machine, "anon_huge_mib", lambda: next(seen))
    with machine.HugePages("plain pages asked for", 1 << 30, requested=False) as h:
        pass
    assert h.share == 0.0 and capsys.readouterr().err == ""
