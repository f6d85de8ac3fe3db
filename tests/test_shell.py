"""A script read as the shell reads it: lines, words, comments, quotes and heredocs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import settings as examples
from hypothesis import strategies as st

from trainlint.render.shell import Line, Operator, lines, scan, unwrapped


def test_a_hash_inside_a_word_starts_no_comment() -> None:
    assert lines("echo ${HOST##*-} $# a#b --x 1 # said\n") == (
        [Line(["echo", "${HOST##*-}", "$#", "a#b", "--x", "1"])], True)


def test_a_parameter_in_braces_is_one_word_and_braces_alone_are_words() -> None:
    assert lines("f() { run --out=${OUT}/ckpt; }") == (
        [Line(["f", "()", "{", "run", "--out=${OUT}/ckpt", ";", "}"])], True)


def test_a_continued_line_is_joined_and_a_comment_after_it_is_cut() -> None:
    assert lines("torchrun \\\n  --nnodes 2 \\\n  # --old\ntrain.py") == (
        [Line(["torchrun", "--nnodes", "2"]), Line(["train.py"])], True)
    assert lines("a\\\n#b") == ([Line(["a#b"])], True)  # joined into one word


def test_a_quote_that_spans_lines_is_one_word() -> None:
    assert lines('python -c "\nimport os\n# not a comment\n" --x\nnext') == (
        [Line(["python", "-c", "\nimport os\n# not a comment\n", "--x"]), Line(["next"])],
        True)


def test_heredoc_bodies_are_taken_out_with_where_each_starts() -> None:
    script = 'cat > a.py <<EOF && cat <<-"END" > b.yaml\nprint()\nEOF\n\tk: v\n\tEND\nrun a.py'
    assert lines(script) == ([
        Line(["cat", ">", "a.py", "&&", "cat", ">", "b.yaml"], ((3, "print()"), (5, "k: v"))),
        Line(["run", "a.py"]),
    ], True)


def test_a_here_string_and_a_quoted_operator_start_no_heredoc() -> None:
    assert lines('cat <<< "x"\necho "<<EOF"\nnext') == (
        [Line(["cat", "<<<", "x"]), Line(["echo", "<<EOF"]), Line(["next"])], True)


def test_a_redirection_is_a_word_of_its_own_and_takes_its_descriptor() -> None:
    assert lines("run > log 2>&1 &\nrun &>/dev/null --out=/ckpt>o.txt 2>> e >| f --n 1&>g") == (
        [Line(["run", ">", "log", "2>&1", "&"]),
         Line(["run", "&>", "/dev/null", "--out=/ckpt", ">", "o.txt", "2>>", "e", ">|", "f",
               "--n", "1", "&>", "g"])],
        True)


@pytest.mark.parametrize("script", ["echo 'unclosed\nnext", 'echo "unclosed', "a 'b' 'c"])
def test_a_quote_never_closed_ends_the_reading_where_the_shell_stops(script: str) -> None:
    assert lines("first\n" + script) == ([Line(["first"])], False)


@pytest.mark.parametrize(("words", "found"), [
    (["python", "t.py"], (0, ())),
    (["A=1", "exec", "python", "t.py"], (2, ("exec",))),
    (["env", "-u", "X", "B=2", "python"], (4, ("env",))),
    (["timeout", "-s", "KILL", "1h", "tini", "--", "sleep"], (6, ("timeout", "tini"))),
    (["nohup"], (1, ("nohup",))),
    (["command", "-v", "python"], None),
    (["uv", "run", "--frozen", "--with", "wandb", "torchrun", "t.py"], (5, ("uv",))),
    (["uv", "pip", "install", "torch"], (0, ())),
    (["uv", "--project", "/app", "run", "--frozen", "python"], (5, ("uv",))),
    (["numactl", "--cpunodebind=0", "-m", "0", "python"], (4, ("numactl",))),
    (["numactl", "--cpunodebind", "0", "--membind", "0", "python"], (5, ("numactl",))),
    (["taskset", "-c", "0-7", "gosu", "app", "python"], (5, ("taskset", "gosu"))),
    (["conda", "run", "-n", "train", "--no-capture-output", "python"], (5, ("conda",))),
])
def test_the_command_past_what_runs_it(
        words: list[str], found: tuple[int, tuple[str, ...]] | None) -> None:
    assert unwrapped(words) == found


@examples(max_examples=300, deadline=None)
@given(st.text(alphabet=" \t\r\n\x0b\xa0\\'\"#<>-;&|(){}$`aZ_=2", max_size=40))
def test_any_text_is_read_to_an_end(text: str) -> None:
    """Whatever the text, the reading ends (each step takes something), and what it
    says is in the text."""
    read = scan(text)
    assert all(0 <= start <= end <= len(text) for start, end in read.literal)
    assert all(at <= len(line.tokens) for line in read.lines for at, _ in line.heredocs)


def test_where_the_shell_expands_nothing() -> None:
    text = "a '$(X)' \"$(Y)\" # $(Z)\ncat <<'E'\n$(W)\nE\ncat <<E\n$(V)\nE\n"
    literal = [text[start:end] for start, end in scan(text).literal]
    assert literal == ["$(X)", "# $(Z)", "E", "$(W)\nE\n"]


def test_a_quoted_operator_is_a_word_and_only_operators_are_operators() -> None:
    [line], _ = lines("a --sep ';' \\; '()' && b | c")
    assert line.tokens == ["a", "--sep", ";", ";", "()", "&&", "b", "|", "c"]
    assert [isinstance(token, Operator) for token in line.tokens] == [
        False, False, False, False, False, True, False, True, False]


@pytest.mark.parametrize(("script", "words"), [
    ("a --n=$(nproc) b", ["a", "--n=$(nproc)", "b"]),
    ("echo $((1<<k)) x", ["echo", "$((1<<k))", "x"]),
    ("a --ds <(echo '{ }') b", ["a", "--ds", "<(echo '{ }')", "b"]),
    ('a "$(python -c "print(1)")" b', ["a", "$(python -c \"print(1)\")", "b"]),
    ("a `date +%s` b", ["a", "`date +%s`", "b"]),
    ("a ${NAME:-my run} b", ["a", "${NAME:-my run}", "b"]),
    ("ARGS=(--x 1) b", ["ARGS=(--x 1)", "b"]),
    ("echo $'it\\'s\\t' b", ["echo", "it's\t", "b"]),
    ("sleep infinity\r", ["sleep", "infinity\r"]),
])
def test_an_expansion_stays_whole_in_its_word(script: str, words: list[str]) -> None:
    assert lines(script) == ([Line(words)], True)


def test_a_heredoc_ends_at_its_end_word_alone() -> None:
    script = "cat <<EOF\n  EOF\nEOF \nEOF\nrun\ncat <<-E\n\tk: v\n\tE\n"
    assert lines(script) == (
        [Line(["cat"], ((1, "  EOF\nEOF "),)), Line(["run"]), Line(["cat"], ((1, "k: v"),))],
        True)


@pytest.mark.parametrize("script", ["a $(b", "a `b", "a ${b", "a <(b", "a $'b"])
def test_an_expansion_never_closed_ends_the_reading(script: str) -> None:
    assert lines("first\n" + script) == ([Line(["first"])], False)


@pytest.mark.parametrize("opening", ['"$(', "$(", "${", "<("])
def test_expansions_nested_deep_are_read_without_recursion(opening: str) -> None:
    read = scan(opening * 20_000)
    assert read.complete is False and read.lines == []


def test_what_expansions_hold_in_single_quotes_is_literal_too() -> None:
    text = "a $'$(X)' $(awk '{print $(NF)}' f) `awk '{print $(Y)}'` \"$(Z)\""
    literal = [text[start:end] for start, end in scan(text).literal]
    assert literal == ["$(X)", "{print $(NF)}", "{print $(Y)}"]
