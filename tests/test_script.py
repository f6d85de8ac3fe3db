"""The trainer's command read as the shell, Python and config parsers read it."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import given
from hypothesis import settings as examples
from hypothesis import strategies as st

from trainlint.document import Manifest, Source
from trainlint.render import script
from trainlint.render.tree import Origin

AT = Origin(Manifest({}, Source("case.yaml")), ("spec",))


def read(*items: str) -> script.Script:
    return script.read_items([(item, AT) for item in items])


def settings(found: script.Script) -> list[tuple[str, object, str, str | None]]:
    return [(s.key, s.value, s.origin, s.path()) for s in found.settings]


def test_flags_overrides_and_list_items() -> None:
    found = read("torchrun", "--nnodes", "2", "train.py", "--output_dir", "/ckpt", "lr=1e-4",
                 "--overwrite_output_dir")
    assert settings(found) == [
        ("nnodes", "2", "flag --nnodes", None),
        ("output_dir", "/ckpt", "flag --output_dir", "/ckpt"),
        ("lr", "1e-4", "arg lr", None),
        ("overwrite_output_dir", None, "flag --overwrite_output_dir", None),
    ]
    assert script.truth(found.settings[-1]) is True
    assert script.runs_torchrun(found)


def test_inline_python_keywords_are_read_without_their_commas() -> None:
    found = read("bash", "-c", 'python - <<\'PY\'\nTrainingArguments(\n    output_dir="/w/out",'
                 ' save_strategy="no",\n    max_steps=30)\nPY\n')
    assert settings(found) == [
        ("output_dir", "/w/out", "`output_dir=` in its program", "/w/out"),
        ("save_strategy", "no", "`save_strategy=` in its program", None),
        ("max_steps", 30, "`max_steps=` in its program", None),
    ]


def test_a_heredoc_config_is_read_relative_to_the_cd_before_it() -> None:
    found = read("bash", "-c", "cd /mnt/work && export OUT=x\ncat >sft.yaml <<EOL\n"
                 "output_dir: adapters\nsave_steps: 500\nEOL\nllamafactory-cli train sft.yaml\n")
    assert settings(found) == [
        ("output_dir", "adapters", "`output_dir` in its config `sft.yaml`", "/mnt/work/adapters"),
        ("save_steps", 500, "`save_steps` in its config `sft.yaml`", None),
    ]


def test_a_heredoc_that_becomes_a_python_file_is_a_program() -> None:
    # As the Kubeflow SDK runs a training function: read into a variable, then written out.
    for held in ('"$SCRIPT"', '"${SCRIPT}"'):
        sdk = read("bash", "-c", "\nread -r -d '' SCRIPT << EOM\n\ndef train():\n"
                   '    TrainingArguments(output_dir="/w/out", save_steps=50)\n\ntrain()\n\n'
                   f'EOM\nprintf "%s" {held} > "train.py"\ntorchrun "train.py"')
        assert settings(sdk) == [
            ("output_dir", "/w/out", "`output_dir=` in its program", "/w/out"),
            ("save_steps", 50, "`save_steps=` in its program", None),
        ]
    written = read("bash", "-c", "cd /opt\ncat > train.py <<'PY'\nTrainer(output_dir='out')\nPY\n"
                   "python train.py")
    assert settings(written) == [("output_dir", "out", "`output_dir=` in its program", "/opt/out")]


def test_a_heredoc_not_written_to_a_python_file_is_no_program() -> None:
    program = "f(output_dir='/w')"
    # written to a text file; another variable written; held and never written
    assert read("bash", "-c", f"read -r -d '' NOTES << EOM\n{program}\nEOM\n"
                "printf '%s' \"$NOTES\" > notes.txt\n").settings == ()
    assert read("bash", "-c", f"read -r -d '' S << EOM\n{program}\nEOM\n"
                "printf '%s' \"$OTHER\" > t.py\n").settings == ()
    assert read("bash", "-c", f"read -r -d '' S << EOM\n{program}\nEOM\necho done\n").settings == ()
    # `read` without `-d ''` takes the heredoc's first line only
    assert read("bash", "-c", f"read S << EOM\nx = 1\n{program}\nEOM\n"
                "printf '%s' \"$S\" > t.py\n").settings == ()
    whole = read("bash", "-c", f"read -rd '' S << EOM\n{program}\nEOM\necho \"$S\" > t.py\n")
    assert settings(whole) == [("output_dir", "/w", "`output_dir=` in its program", "/w")]


@pytest.mark.parametrize("script", [
    "python -c '" + "-" * 100_000 + "1'",  # ast.parse: MemoryError
    "python - <<PY\n" + "a." * 100_000 + "b\nPY\n",  # ast.parse: RecursionError
    "cat > c.json <<EOF\n" + "[" * 50_000 + "]" * 50_000 + "\nEOF\n",  # json: RecursionError
    "cat > c.yaml <<EOF\n" + "[" * 50_000 + "]" * 50_000 + "\nEOF\n",  # PyYAML: RecursionError
], ids=["python-c", "python-heredoc", "json-config", "yaml-config"])
def test_programs_and_configs_too_deep_for_their_parsers_are_no_settings(script: str) -> None:
    assert read("bash", "-c", script).settings == ()


#: A config of aliases nesting aliases (a "billion laughs": 10^9 items from 10 lines).
_BOMB = "\n".join([f"l0: &l0 [{', '.join(['x'] * 10)}]"] + [
    f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 10)}]" for n in range(1, 9)]) + "\nk: *l8"


def test_a_config_of_aliases_is_no_settings() -> None:
    """A config whose aliases nest (`_BOMB`) says nothing, not even of its plain keys; one
    without aliases is read."""
    bomb = f"{_BOMB}\nsave_strategy: *l8\noutput_dir: /w"
    # the keys alone: a failure must not print the bomb's billions of items
    assert [s.key for s in read("bash", "-c", f"cat > c.yaml <<EOF\n{bomb}\nEOF\n").settings] == []
    plain = read("bash", "-c", "cat > c.yaml <<EOF\nsave_strategy: [a, b]\noutput_dir: /w\nEOF\n")
    assert [setting.key for setting in plain.settings] == ["save_strategy", "output_dir"]


#: Lines of the shapes the reader takes apart, hostile ones among them.
_LINES = [
    "python - <<PY", "python -c 'f(output_dir=\"/w\")'", "PY", "EOF", "EOM", "cd /w", "cd ..",
    "read -r -d '' S << EOM", "read S <<EOM", 'printf "%s" "$S" > t.py', "echo ${S} > t.json",
    "cat > c.yaml <<EOF", "cat > c.json <<'EOF'", "cat > t.py <<EOF", "tee c.yml <<EOF",
    "torchrun --output_dir /w/out t.py", "f(save_steps=10, output_dir='o')", "output_dir: out",
    '{"output_dir": "o"}', "'", '"', "\\", "$(", "${", "<<", "&& ||", "#", "",
    "-" * 10_000 + "1", "a." * 5_000 + "b", "[" * 3_000 + "]" * 3_000, _BOMB,
    *(f"cat > c.{kind} <<EOF\n{body}\nEOF" for kind in ("yaml", "json")
      for body in (_BOMB, "[" * 3_000 + "]" * 3_000)),
    "python - <<PY\n" + "a." * 5_000 + "b\nPY",
]


@examples(max_examples=60, deadline=None)
@given(lines=st.lists(st.sampled_from(_LINES) | st.text(max_size=12), max_size=14))
def test_any_script_is_read_without_an_error(lines: list[str]) -> None:
    """Whatever the script, reading it raises nothing, and what it sets is plain data: no
    value reaches a list or a mapping twice (as YAML aliases make one)."""
    for items in (("bash", "-c", "\n".join(lines)), ("python", "-c", "\n".join(lines))):
        for setting in read(*items).settings:
            assert script._tree(setting.value)


def test_shell_variables_and_unreadable_text_are_not_settings() -> None:
    assert read("bash", "-c", "export RANK=$PET_NODE_RANK\nA=b python train.py").settings == ()
    assert read("bash", "-c", "python train.py --output_dir='/unterminated").settings == ()
    assert read("python", "-c", "def broken(:\n  pass").settings == ()
    assert read("bash", "-c", "cat > c.yaml <<EOF\n{{ template }}: [\nEOF\n").settings == ()


def test_what_the_shell_runs_is_read_past_comments_keywords_and_wrappers() -> None:
    found = read("bash", "-c", "R=${HOSTNAME##*-} # rank\n"
                 "if [ -n \"$R\" ]; then exec python -c \"\nf(save_steps=5)\n\"; fi\n"
                 "timeout 2h torchrun t.py --output_dir=${OUT}/ckpt --lr 1e-4 # --old 1")
    assert settings(found) == [
        ("save_steps", 5, "`save_steps=` in its program", None),
        ("output_dir", "${OUT}/ckpt", "flag --output_dir", None),
        ("lr", "1e-4", "flag --lr", None),
    ]
    assert [code for code, _ in found.programs] == ["\nf(save_steps=5)\n"]


def test_each_heredoc_of_a_line_feeds_its_own_command() -> None:
    found = read("bash", "-c", "cat > a.yaml <<A; cat > b.py <<B\nsave_steps: 3\nA\n"
                 "f(output_dir='/o')\nB\npython b.py")
    assert settings(found) == [
        ("save_steps", 3, "`save_steps` in its config `a.yaml`", None),
        ("output_dir", "/o", "`output_dir=` in its program", "/o"),
    ]
    assert [code for code, _ in found.programs] == ["f(output_dir='/o')"]


def test_the_rendezvous_flags() -> None:
    own = read("python", "-m", "torch.distributed.run", "--nnodes=2", "--master-addr=h", "t.py")
    assert script.own_rendezvous(own) is not None and script.static_rendezvous(own)
    elastic = read("torchrun", "--rdzv_backend", "c10d", "--rdzv_endpoint", "h:29400", "t.py")
    assert not script.static_rendezvous(elastic)
    assert not script.static_rendezvous(read("python", "train.py"))


RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: plain}
spec:
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
            spec:
              template:
                spec:
                  containers: [{name: node, image: busybox}]
"""


def script_of(command: list[str]) -> str | None:
    """The script `shell_script` finds in the `node` container of a TrainJob that runs
    `command` on a runtime of one job."""
    from trainlint.loader import load
    from trainlint.release import NEWEST
    from trainlint.render.build import render

    [runtime] = load(RUNTIME, "runtime.yaml").manifests
    [job] = load(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: run}\n"
        f"spec: {{runtimeRef: {{name: plain}}, trainer: {{command: {json.dumps(command)}}}}}\n",
        "job.yaml",
    ).manifests
    rendered = render(job, runtime, NEWEST)  # kept while its containers are read
    [container] = rendered.containers()
    found = script.shell_script(container)
    return None if found is None else found[0]


@pytest.mark.parametrize("command", [
    ["bash", "-c", "S"], ["sh", "-ec", "S"], ["bash", "-euo", "pipefail", "-c", "S"],
    ["bash", "-o", "pipefail", "-ec", "S"], ["bash", "-lc", "S"],
    ["/usr/bin/tini", "--", "bash", "-c", "S"],
    ["env", "-u", "FOO", "bash", "-c", "S"], ["/usr/bin/env", "A=1", "bash", "-c", "S"],
    ["timeout", "3600", "bash", "-c", "S"], ["timeout", "-s", "KILL", "1h", "sh", "-c", "S"],
    ["dumb-init", "--", "sh", "-c", "S"], ["nice", "-n", "10", "bash", "-c", "S"],
])
def test_the_script_of_a_shell_behind_its_options_and_wrappers(command: list[str]) -> None:
    assert script_of(command) == "S"


@pytest.mark.parametrize("command", [
    ["python", "-c", "S"], ["bash", "train.sh"], ["bash", "-e", "train.sh"],
    ["bash", "-o", "c", "train.sh"], ["timeout", "bash", "-c", "S"], ["env", "-u", "bash"],
])
def test_no_script_where_no_shell_runs_one(command: list[str]) -> None:
    assert script_of(command) is None


def test_the_programs_python_runs_itself() -> None:
    heredoc = ("cd /w\npython - <<'PY'\nimport os\nPY\n"
               "cat > t.py <<EOF\nprint(1)\nEOF\npython -u t.py")
    assert [code for code, _ in read("bash", "-c", heredoc).programs] == ["import os", "print(1)"]
    assert [code for code, _ in read("python3", "-c", "print(2)").programs] == ["print(2)"]
    assert read("torchrun", "--no-python", "python", "-c", "print(3)").programs == ()
    assert read("bash", "-c", "cat > t.py <<EOF\nx\nEOF\npython other.py").programs == ()


def test_the_program_of_c_behind_other_options_of_the_interpreter() -> None:
    for interpreter in (["python3", "-u", "-c"], ["python3", "-uc"],
                        ["python", "-W", "ignore", "-Bc"]):
        found = read(*interpreter, 'TrainingArguments(output_dir="/ckpt")')
        assert [code for code, _ in found.programs] == ['TrainingArguments(output_dir="/ckpt")']
        assert settings(found) == [("output_dir", "/ckpt", "`output_dir=` in its program", "/ckpt")]
    in_script = read("bash", "-c", "python -u -c 'TrainingArguments(output_dir=\"/o\")'")
    assert [code for code, _ in in_script.programs] == ['TrainingArguments(output_dir="/o")']
    assert settings(in_script) == [("output_dir", "/o", "`output_dir=` in its program", "/o")]
    # A module's or a file's own `-c` is its argument, not a program.
    assert read("python3", "-m", "tool", "-c", "x=1").programs == ()
    assert read("python3", "-u", "train.py", "-c", "x=1").programs == ()


@pytest.mark.parametrize(("code", "needed"), [
    ('import os\nr = int(os.environ["RANK"])', ["RANK"]),
    ('import os\nr = int(os.getenv("LOCAL_RANK"))', ["LOCAL_RANK"]),
    ('dist.init_process_group("nccl", rank=0, world_size=2)', ["MASTER_ADDR", "MASTER_PORT"]),
    ('import os\nr = int(os.environ.get("RANK", 0)); w = os.getenv("WORLD_SIZE")', []),
    ('dist.init_process_group("nccl", init_method="tcp://h:1", rank=0, world_size=2)', []),
    ('import os\nif "RANK" in os.environ:\n    r = os.environ["RANK"]', []),
    ('import os\ntry:\n    r = os.environ["RANK"]\nexcept KeyError:\n    r = 0', []),
    ('import os\ndef unused():\n    return os.environ["RANK"]', []),
    ('import os\nos.environ["RANK"] = "0"\nr = os.environ["RANK"]', []),
    ('import os\nos.environ.update(ranks)\nr = os.environ["RANK"]', []),
])
def test_what_a_program_needs_of_its_environment(code: str, needed: list[str]) -> None:
    assert [need.name for need in script.environ_needs(code)] == needed


def test_what_may_launch_a_program() -> None:
    assert script.launcher(read("bash", "-c", "accelerate launch t.py")) == "accelerate"
    assert script.launcher(read("python", "-m", "torch.distributed.run", "t.py")) is not None
    spawns = "import torch.multiprocessing as mp\nmp.spawn(f, nprocs=2)"
    assert script.launcher(read("python", "-c", spawns)) == "torch.multiprocessing"
    assert script.launcher(read("python", "-c", "import os\nprint(os.environ['RANK'])")) is None
    assert script.assigned(read("bash", "-c", "export RANK=$PET_NODE_RANK; python -c x")) == {
        "RANK"}
    assert script.assigned(read("bash", "-c", "read RANK < /etc/rank\nexport RANK")) == {"RANK"}
    assert script.launcher(read("bash", "-c", "export $(cat /etc/dist.env)\npython t.py"))


def test_the_reads_of_a_long_program_are_found_in_linear_time() -> None:
    """Each read's text is cut from the program's lines, read once: 4,000 reads took a
    minute when each was cut from the whole program (`ast.get_source_segment`)."""
    code = "import os\n" + "".join(f"a{i} = os.environ['RANK']\n" for i in range(4000))
    started = time.process_time()
    needs = script.environ_needs(code)
    assert len(needs) == 4000 and needs[-1].text == "os.environ['RANK']"
    assert time.process_time() - started < 10


def test_the_program_of_a_mounted_file_the_command_runs() -> None:
    """The first `.py` word is what runs (one after it is an argument); its literals
    outrank the flags, in a list as in a shell's script."""
    files = (("/code/eval.py", 'TrainingArguments(output_dir="/tmp/eval")'),
             ("/code/train.py", 'TrainingArguments(save_strategy="no")'))
    for items in (["torchrun", "train.py", "--save_strategy", "steps", "/code/eval.py"],
                  ["bash", "-c", "cd /code && torchrun train.py --save_strategy steps eval.py"]):
        found = script.read_items([(item, AT) for item in items], files, "/code")
        assert [code for code, _ in found.programs] == ['TrainingArguments(save_strategy="no")']
        assert found.get("save_strategy") is not None
        assert found.get("save_strategy").value == "no"  # type: ignore[union-attr]
        assert found.get("output_dir") is None
        # A finding names the file its evidence is in: the command names only the file.
        assert found.get("save_strategy").origin == (  # type: ignore[union-attr]
            "`save_strategy=` in its program `/code/train.py`")
