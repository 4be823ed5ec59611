"""Hostile input, round 4 (2026-12-05): a helper's hunt from a wheel install found these, each run here the way it
was found (in a forked child under a deadline): a domain z3 cannot decide passed, reports written to files the
command line never asked for, a report over one of the command's own inputs, a link loop as a report's file, a
kernel whose exception cannot be printed, a kernel file killed by a signal as it loads, and JUnit that was not XML."""

import xml.dom.minidom

from tests.acceptance.hostile.harness import judge, run
from tests.acceptance.hostile.inputs import BASES
from tests.acceptance.hostile.test_round2 import refused, verify, write

ROWS, MM = BASES[:2]


def test_a_domain_z3_cannot_decide_is_inconclusive_never_a_pass(warm, tmp_path):
    # no positive M, K, N satisfy it (Fermat, n = 3), but z3 cannot say so in 100 ms: the obligations proved
    # below may hold of no input, so nothing is known to be checked (it was PASS, exit 0, and cached)
    text = MM.file.read_text().replace("[dims]", '[domain]\nrequires = ["M * M * M == K * K * K + N * N * N"]\n\n[dims]', 1)
    contract = write(tmp_path, text)
    o = run(["verify", "op", MM.op, "--contract", contract, "--timeout-ms", "100", "-j", "1"], cwd=tmp_path)
    judge(o)
    assert o.code == 3 and "SC005" in o.stdout and "[domain]" in o.stdout, o
    again = run(["verify", "op", MM.op, "--contract", contract, "--timeout-ms", "100", "-j", "1"], cwd=tmp_path)
    assert again.code == 3 and "reused" not in again.stdout + again.stderr, again  # never answered from the cache


def test_a_report_is_written_only_where_an_option_the_command_parsed_asks(warm, tmp_path):
    victims = [tmp_path / n for n in ("a.txt", "b.txt", "c.txt")]
    for argv in (["verify", "op", MM.op, "--json", victims[0]],  # verify has no --json
                 ["contract", "check", MM.file, "--junit", victims[1]],  # nor has contract check
                 verify(ROWS.file, "--case", f"--output=json={victims[2]}")):  # a --case value, not an option
        o = run([str(a) for a in argv], cwd=tmp_path)
        judge(o)
        assert o.code == 2, o
    assert not any(v.exists() for v in victims)
    # an option the command has still gets its report of the failed run (CI waits for it)
    report = tmp_path / "r.xml"
    o = run(["gate", str(tmp_path / "missing.toml"), "--junit", str(report)], cwd=tmp_path)
    assert o.code == 2 and "exit 2" in report.read_text(), o


def test_a_report_never_overwrites_an_input_of_the_command(warm, tmp_path):
    contract = write(tmp_path, ROWS.file.read_text())
    before = contract.read_text()
    refused(verify(contract, "--output", f"json={contract}"), "", "would overwrite --contract")
    assert contract.read_text() == before  # neither the run's report nor the error report went there
    baseline = tmp_path / "base.json"
    baseline.write_text('{"shapecheck_baseline": 1, "findings": []}')
    kept = baseline.read_text()
    refused(["gate", contract, "--baseline", baseline, "--json", baseline], "", "would overwrite --baseline")
    assert baseline.read_text() == kept
    refused(["gate", contract, "--write-baseline", tmp_path / "same.json", "--json", tmp_path / "same.json"], "",
            "write to the same file")


def test_a_report_through_a_loop_of_links_is_bad_input(warm, tmp_path):
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    refused(verify(ROWS.file, "--output", f"json={tmp_path / 'loop'}"), "", "a link that leads nowhere")
    refused(["gate", MM.file, "--sarif", tmp_path / "loop"], "", "a link that leads nowhere")


UNPRINTABLE = """\
class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no message")


def rows(x, pad, flag=False):
    raise Unprintable()
"""


def test_a_kernel_exception_that_cannot_be_printed_is_the_kernels_failure(warm, tmp_path):
    kernel = write(tmp_path, UNPRINTABLE, "k.py")
    o = run(["verify", "op", ROWS.op, "--contract", str(ROWS.file), "--meta", f"{kernel}:rows", "-j", "1",
             "--no-cache", "--case", "pad=8"], cwd=tmp_path)
    judge(o)
    assert o.code == 1 and "SC007" in o.stdout and "Unprintable: <its message cannot be shown" in o.stdout, o
    at_import = write(tmp_path, UNPRINTABLE + "\nraise Unprintable()\n", "k_import.py")
    refused(["verify", "op", ROWS.op, "--contract", ROWS.file, "--meta", f"{at_import}:rows", "-j", "1"],
            "k_import.py", "Unprintable")


def test_a_kernel_file_killed_by_a_signal_as_it_loads_is_bad_input_naming_it(warm, tmp_path):
    # SIGTERM leaves no stack (faulthandler does not catch it): the file under import is named all the same
    kernel = write(tmp_path, "import os\nimport signal\n\nos.kill(os.getpid(), signal.SIGTERM)\n\n\n"
                             "def rows(x, pad, flag=False):\n    return x\n", "dies.py")
    refused(["verify", "op", ROWS.op, "--contract", ROWS.file, "--meta", f"{kernel}:rows", "-j", "1"], "dies.py",
            "died of SIGTERM while it was imported")
    # killed while the kernel runs: the kernel's failure (SC007), not shapecheck's (exit 4)
    runs = write(tmp_path, "import os\nimport signal\n\n\ndef rows(x, pad, flag=False):\n"
                           "    os.kill(os.getpid(), signal.SIGTERM)\n", "dies_running.py")
    o = run(["verify", "op", ROWS.op, "--contract", str(ROWS.file), "--meta", f"{runs}:rows", "-j", "1", "--no-cache",
             "--case", "pad=8"], cwd=tmp_path)
    judge(o)
    assert o.code == 1 and "SC007" in o.stdout and "SIGTERM" in o.stdout, o


def test_junit_stays_xml_whatever_the_messages_hold(warm, tmp_path):
    kernel = write(tmp_path, 'def rows(x, pad, flag=False):\n    raise ValueError("bell\\x07 nul\\x00 <&> ]]>")\n', "k.py")
    o = run(["verify", "op", ROWS.op, "--contract", str(ROWS.file), "--meta", f"{kernel}:rows", "-j", "1", "--no-cache",
             "--case", "pad=8", "--format", "junit"], cwd=tmp_path)
    assert o.code == 1, o
    doc = xml.dom.minidom.parseString(o.stdout.encode())
    assert "bell\\x07 nul\\x00 <&>" in doc.getElementsByTagName("failure")[0].firstChild.data
    gh = run(["verify", "op", ROWS.op, "--contract", str(ROWS.file), "--meta", f"{kernel}:rows", "-j", "1",
              "--no-cache", "--case", "pad=8", "--format", "github"], cwd=tmp_path)
    assert "\x07" not in gh.stdout and "\x00" not in gh.stdout and "bell\\x07" in gh.stdout, gh


def test_an_op_explored_in_part_stays_inconclusive_once_its_findings_are_accepted(warm, tmp_path):
    # the regressed SDPA-MPS kernel: findings, and the exploration stops with regions left (it was exit 0 once
    # the baseline accepted the findings, though the baseline listed nothing untraced)
    import json

    from tests.acceptance.hostile.harness import ROOT

    audit = ["audit", "--ops", "aten::_scaled_dot_product_attention_math_for_mps*", "--meta-source",
             str(ROOT / "tests" / "kernels" / "regressed_registrations.py"), "--baseline", str(tmp_path / "b.json")]
    first = run(audit, cwd=tmp_path)
    assert first.code == 0, first  # a missing baseline is written, the partial op excused with its reason
    doc = json.loads((tmp_path / "b.json").read_text())
    assert [u["op"] for u in doc["untraced"]] == ["aten::_scaled_dot_product_attention_math_for_mps.default"]
    assert "not explored" in doc["untraced"][0]["reason"]
    assert run(audit, cwd=tmp_path).code == 0, "excused by the baseline, with its reason"
    doc["untraced"] = []
    (tmp_path / "b.json").write_text(json.dumps(doc))
    o = run(audit, cwd=tmp_path)
    judge(o)
    assert o.code == 3 and "explored in part" in o.stdout, o


def test_the_runs_time_budget_covers_loading_the_kernel(warm, tmp_path):
    # an endless loop at import, and a default argument that sleeps: both hung past --timeout run=3
    looping = write(tmp_path, "while True:\n    try:\n        pass\n    except Exception:\n        pass\n\n\n"
                              "def rows(x, pad, flag=False):\n    return x\n", "looping.py")
    sleeping = write(tmp_path, "import time\n\n\ndef rows(x, pad, flag=False, _x=time.sleep(10**6)):\n    return x\n",
                     "sleeping.py")
    for kernel in (looping, sleeping):
        refused(["verify", "op", ROWS.op, "--contract", ROWS.file, "--meta", f"{kernel}:rows", "-j", "1",
                 "--timeout", "run=2"], kernel.name, "did not finish within the run's time budget", seconds=30)
