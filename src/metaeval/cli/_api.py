"""Command-line options generated from an analysis' signature and docstring (issue 25.3).

``@api_options("correlation:correlate", "ci", "n_resamples", ...)`` adds one click option per
keyword: its name is the keyword (``n_resamples`` -> ``--n-resamples``), its help the first
sentence of the keyword's description in the numpydoc docstring followed by
``[default: <the signature's default>]``, and its default is "not given": an option left out
is not passed, so the analysis' own default applies by construction and an option's default
can never differ from the function's (tests/test_cli_api.py checks every command).  A bool
default becomes a ``--x/--no-x`` flag; sequences are comma-separated; an option whose keyword
the analysis checks against a registry of :mod:`metaeval._choices` lists it (and completes it).
A target is ``"module:function"`` or ``"module:Class"`` (the keywords of its ``__init__``,
described in the class docstring, as numpydoc writes them: ``textmetrics._judge:LLMJudge``).

The signature and the docstring are read from the analysis module's source (``ast``), not by
importing it: ``metaeval <command> --help`` then imports no statistics, pandas or numba
(tests/test_startup.py); they are read when the command's module is imported, i.e. only for the
command that runs or whose help is shown.  The tests compare what is read here with
:func:`inspect.signature` of the imported function.
"""

from __future__ import annotations

import ast
import functools
import operator
import re
from pathlib import Path

import click

#: Keywords the command line spells otherwise as well, kept as hidden aliases so that
#: existing scripts keep working: keyword -> old option names.
OLD_SPELLINGS = {"rng": ("--seed",), "n_jobs": ("--jobs",)}

_SRC = Path(__file__).resolve().parents[1]  # src/metaeval


class Param:
    """One keyword of an analysis: its default (a Python value), and its description."""

    __slots__ = ("name", "default", "annotation", "doc")

    def __init__(self, name, default, annotation, doc):
        self.name, self.default, self.annotation, self.doc = name, default, annotation, doc

    def __repr__(self):
        return f"Param({self.name}={self.default!r})"


def _module_path(module):
    """The source file of ``metaeval.<module>`` (dotted), found without importing it."""
    base = _SRC.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    raise LookupError(f"no module metaeval.{module}")


@functools.lru_cache(maxsize=None)
def _module_ast(module):
    return ast.parse(_module_path(module).read_text(encoding="utf-8"))


#: Arithmetic a default may be written with (on numbers only): ``16 * 2**20`` reads as 16777216.
_ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Pow: operator.pow,
               ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv}


def _resolve(module, node):
    """The value of a default written as a literal, arithmetic on numbers, a constant of ``_choices``
    or a module-level literal constant; a LookupError names what cannot be read without running the
    module."""
    try:
        return ast.literal_eval(node)
    except ValueError:
        pass
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:  # e.g. 16 * 2**20
        left, right = _resolve(module, node.left), _resolve(module, node.right)
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right)):
            return _ARITHMETIC[type(node.op)](left, right)
    from .. import _choices

    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "_choices":
        return getattr(_choices, node.attr)
    if isinstance(node, ast.Name):
        tree = _module_ast(module)
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == node.id
                                                    for t in stmt.targets):
                return _resolve(module, stmt.value)
            if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Tuple) \
                    and isinstance(stmt.value, ast.Tuple):
                for t, v in zip(stmt.targets[0].elts, stmt.value.elts):
                    if isinstance(t, ast.Name) and t.id == node.id:
                        return _resolve(module, v)
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) \
                    and stmt.target.id == node.id and stmt.value is not None:
                return _resolve(module, stmt.value)
            if isinstance(stmt, ast.ImportFrom):
                for a in stmt.names:
                    if (a.asname or a.name) == node.id:
                        if stmt.module and stmt.module.endswith("_choices"):
                            return getattr(_choices, a.name)
                        return _resolve(_imported(module, stmt), ast.Name(a.name))
    raise LookupError(f"metaeval.{module}: cannot read the default {ast.unparse(node)!r} without "
                      "importing the module; write it as a literal or a constant of metaeval._choices")


def _imported(module, stmt):
    """The dotted module (below metaeval) an ``ImportFrom`` in ``module`` names."""
    if not stmt.level:
        return stmt.module.removeprefix("metaeval.")
    is_pkg = _module_path(module).name == "__init__.py"
    parts = module.split(".") if is_pkg else module.split(".")[:-1]
    parts = parts[: len(parts) - (stmt.level - 1)] if stmt.level > 1 else parts
    return ".".join(parts + ([stmt.module] if stmt.module else []))


def _find_function(module, name, depth=0):
    tree = _module_ast(module)
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
            return module, stmt
        if isinstance(stmt, ast.ClassDef) and stmt.name == name:
            init = next((s for s in stmt.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
            if init is not None:
                init.docstring_owner = stmt  # the class docstring documents its parameters
                return module, init
            fields = _dataclass_init(stmt)
            if fields is not None:
                return module, fields
    for stmt in tree.body:  # a re-export: follow it
        if isinstance(stmt, ast.ImportFrom) and depth < 5:
            for a in stmt.names:
                if (a.asname or a.name) == name:
                    return _find_function(_imported(module, stmt), a.name, depth + 1)
    raise LookupError(f"metaeval.{module} has no function {name!r}")


def _dataclass_init(cls):
    """The ``__init__`` a ``@dataclass`` writes, as an ``ast.FunctionDef`` whose keyword-only
    arguments are its fields with their defaults (``field(...)`` defaults are left out); None
    when ``cls`` is not a dataclass.  The class docstring documents the fields."""
    names = {ast.unparse(d.func if isinstance(d, ast.Call) else d) for d in cls.decorator_list}
    if not names & {"dataclass", "dataclasses.dataclass"}:
        return None
    fields = [s for s in cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
              and s.simple and not ast.unparse(s.annotation).startswith(("ClassVar", "typing.ClassVar"))]
    fields = [f for f in fields if not (isinstance(f.value, ast.Call) and ast.unparse(f.value.func) == "field")]
    args = ast.arguments(posonlyargs=[], args=[], vararg=None,
                         kwonlyargs=[ast.arg(arg=f.target.id, annotation=f.annotation) for f in fields],
                         kw_defaults=[f.value for f in fields], kwarg=None, defaults=[])
    init = ast.FunctionDef(name="__init__", args=args, body=[], decorator_list=[], returns=None)
    init.docstring_owner = cls
    return init


def _descriptions(doc):
    """numpydoc ``Parameters``: keyword -> the first sentence of its description (the docstring
    as :func:`ast.get_docstring` gives it, dedented: headers at column 0)."""
    out = {}
    lines = doc.splitlines()
    heads = [k for k, ln in enumerate(lines[:-1])
             if ln.strip() in ("Parameters", "Other Parameters") and lines[k + 1].strip().startswith("---")]
    for start in heads:
        names, text = None, []

        def flush():
            if not names:
                return
            para = " ".join(text).split("\f")[0]
            para = re.sub(r":\w+:`~?([^`]+)`", r"\1", para).replace("``", "")
            para = " ".join(para.split())
            para = re.sub(r"\s*\((?:the )?default[^()]*\)", "", para)  # the help adds [default: ...]
            for n in names:
                out.setdefault(n, _first_sentence(para))

        for k in range(start + 2, len(lines)):
            ln = lines[k]
            if k + 1 < len(lines) and lines[k + 1].strip().startswith("---") and ln.strip() \
                    and not ln.startswith(" "):
                break  # the next section's title
            if ln.strip() and not ln.startswith(" "):
                flush()
                names, text = [n.strip().lstrip("*") for n in ln.split(" : ")[0].rstrip(":").split(",")], []
            elif not ln.strip():
                if text:
                    text.append("\f")  # the description's first paragraph ends here
            else:
                text.append(ln.strip())
        flush()
    return out


def _first_sentence(para):
    """Up to the first full stop or semicolon outside parentheses (not "e.g."/"i.e.")."""
    depth = 0
    for k, ch in enumerate(para):
        depth += (ch == "(") - (ch == ")")
        if ch in ".;" and depth <= 0 and (k + 1 == len(para) or para[k + 1] == " ") \
                and not para[max(0, k - 3):k + 1].endswith(("e.g.", "i.e.", "etc.")):
            sentence = para[: k + 1]
            return "" if sentence.startswith("Default") else sentence.rstrip(";") + ("" if ch == "." else ".")
    return para


#: Where a keyword is described when the analysis says "As in ..." or nothing: the
#: vocabulary's first homes.
_VOCABULARY = ("correlation:correlate", "compare:compare", "reliability:consistency")


@functools.lru_cache(maxsize=None)
def signature(target):
    """``"module:function"`` (below metaeval) -> {keyword: Param} of its keyword parameters."""
    module, _, name = target.partition(":")
    module, fn = _find_function(module, name)
    owner = getattr(fn, "docstring_owner", fn)
    docs = _descriptions(ast.get_docstring(owner) or "")
    if owner is not fn:
        docs = {**_descriptions(ast.get_docstring(fn) or ""), **docs}
    a = fn.args
    out = {}
    positional = a.posonlyargs + a.args
    for arg, default in zip(positional[len(positional) - len(a.defaults):], a.defaults):
        out[arg.arg] = (arg, default)
    for arg, default in zip(a.kwonlyargs, a.kw_defaults):
        if default is not None:
            out[arg.arg] = (arg, default)
    params = {n: Param(n, _resolve(module, d), ast.unparse(arg.annotation) if arg.annotation else "",
                       docs.get(n, "")) for n, (arg, d) in out.items()}
    for p in params.values():
        if p.doc.startswith(("As in ", "As for ")):
            p.doc = _referred(module, p.name, p.doc) or p.doc
        if not p.doc or p.doc.startswith("As in") or p.doc.startswith("As for"):
            for home in _VOCABULARY:
                if home != target and _documented(home, p.name):
                    p.doc = _documented(home, p.name)
                    break
    return params


def _documented(target, name):
    module, _, fname = target.partition(":")
    module, fn = _find_function(module, fname)
    return _descriptions(ast.get_docstring(getattr(fn, "docstring_owner", fn)) or "").get(name, "")


def _referred(module, name, doc):
    """The description of ``name`` in the function a docstring refers to ("As in
    metaeval.textmetrics.score.", "As in judge." for a function of the same module), or ""."""
    m = re.fullmatch(r"As (?:in|for) ([A-Za-z_][\w.]*\w)\.?", doc)
    if m is None:
        return ""
    where, _, fname = m.group(1).removeprefix("metaeval.").rpartition(".")
    try:
        return _documented(f"{where or module}:{fname}", name)
    except LookupError:
        return ""


def shown(value, kind=None, keyword=None):
    """A default as the help shows it.  None on a numeric option (``kind`` int or float), which
    does not take the word ``none``, is "not set" (``rng``: "fresh entropy")."""
    if isinstance(value, (tuple, list)):
        return ",".join(map(str, value)) if value else "none"
    if value is None and keyword in ("rng", "seed"):
        return "fresh entropy"
    if value is None and kind in (int, float):
        return "not set"
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


class Registry(click.ParamType):
    """A value (or comma-separated values) from a registry of :mod:`metaeval._choices`: listed in the
    help, completed by the shell; the analysis checks it and its message names the allowed values."""

    name = "choice"

    def __init__(self, choices, many=False):
        self.choices, self.many = tuple(choices), many

    def get_metavar(self, param, ctx=None):
        return "NAME[,NAME]" if self.many else "NAME"

    def shell_complete(self, ctx, param, incomplete):
        from click.shell_completion import CompletionItem

        head, _, last = incomplete.rpartition(",")
        prefix = head + "," if head else ""
        return [CompletionItem(prefix + c) for c in self.choices if c.startswith(last)]


class ApiOption(click.Option):
    """An option that sets one keyword of an analysis (``api_target``, ``api_keyword``); it
    defaults to "not given" (None) and shows the analysis' default; ``aliases`` are older
    spellings that still work and are not shown."""

    def __init__(self, decls, *, api_target=None, api_keyword=None, aliases=(), api_default=None,
                 api_kind=None, when_absent=None, **kw):
        super().__init__(decls, **kw)
        self.api_target, self.api_keyword, self.api_default = api_target, api_keyword, api_default
        self.api_kind, self.when_absent = api_kind, when_absent
        self.aliases = tuple(aliases)

    def get_error_hint(self, ctx):
        return " / ".join(f"'{o}'" for o in self.opts if o not in self.aliases)

    def get_help_record(self, ctx):
        opts = self.opts
        try:
            self.opts = [o for o in opts if o not in self.aliases]
            return super().get_help_record(ctx)
        finally:
            self.opts = opts


def check_spellings(command, args, ctx=None):
    """An option given under its name and under an old spelling (``--seed 0 --rng 1``,
    ``--low 3 --ks-low 2``) would resolve silently to the last one: a one-line error naming both."""
    used = set()
    for a in args:
        if a == "--":
            break
        if a.startswith("--"):
            used.add(a.split("=", 1)[0])
    for p in getattr(command, "params", ()):
        old = set(getattr(p, "aliases", ()) or ()) & used
        new = [o for o in p.opts if o not in old and o in used and o not in getattr(p, "aliases", ())]
        if old and new:
            raise click.UsageError(f"{new[0]} and {sorted(old)[0]} are one option ({sorted(old)[0]} is its old "
                                   f"spelling): give {new[0]} only", ctx=ctx)
        if len(old) > 1:
            a, b = sorted(old)
            raise click.UsageError(f"{a} and {b} are one option (old spellings of {p.opts[0]}): give {p.opts[0]} only", ctx=ctx)


class Seed(click.ParamType):
    """--rng: a non-negative integer (the message says so, not the Python types rng= takes)."""

    name = "integer"

    def convert(self, value, param, ctx):
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
        try:
            out = int(str(value).strip())
        except ValueError:
            out = -1
        if out < 0:
            self.fail(f"{value!r}: give a non-negative integer (or leave it out for fresh entropy)", param, ctx)
        return out


SEED = Seed()


def _split_list(kind):
    def convert(ctx, param, value):
        if value is None:
            return None
        items = [s.strip() for s in value.split(",") if s.strip()]
        if kind is not str:
            try:
                items = [kind(s) for s in items]
            except ValueError:
                raise click.BadParameter(f"{value!r}: give comma-separated {kind.__name__} values") from None
        return items
    return convert


#: Help of keywords whose docstring describes a Python value the command line cannot take.
_CLI_HELP = {"rng": "Random seed, a non-negative integer (not set: fresh entropy, recorded in the signature).",
             "n_jobs": "Worker processes, a positive integer (-1: one per core)."}

#: Help of keywords whose docstring (or vocabulary home) describes them for one analysis only:
#: keyword -> (the targets' prefix where the docstring's sentence holds, the text elsewhere).
_CLI_HELP_OUTSIDE = {"confidence_level": ("compare:", "Confidence level of the bootstrap intervals.")}


def _kind(p):
    """The click type of a keyword, from its default and annotation: bool, int, float, list, str."""
    ann, d = p.annotation.replace(" ", ""), p.default
    if p.name in ("rng", "seed"):
        return int
    if isinstance(d, bool) or ann in ("bool", "bool|None"):
        return bool
    if isinstance(d, (tuple, list)) or re.match(r"(Sequence|Iterable|list|tuple)", ann):
        return list
    if isinstance(d, float) or "float" in ann:
        return float
    if isinstance(d, int) or re.search(r"\bint\b", ann):
        return int
    return str


def api_option(target, keyword, *, name=None, aliases=None, choices=None, strict_choices=None, type=None,
               help=None, prefix="", callback=None, metavar=None, hidden=False, when_absent=None, complete=None):
    """One option for ``keyword`` of ``target`` (see the module's docstring).

    ``name``: the option when it cannot be the keyword (two analyses' keywords in one command);
    ``aliases``: hidden older spellings (default: :data:`OLD_SPELLINGS`); ``choices``: a registry
    the analysis checks (listed first in the help, completed by the shell, passed as given so that
    the analysis' message names a wrong value; with ``type=list``: comma-separated);
    ``strict_choices``: a ``click.Choice`` (click refuses other values);
    ``type``: int, float, str, bool or list (default: from the signature); ``help``: replaces the
    docstring's sentence; ``prefix``: put before it (``"openai: "``, an option of one backend); ``callback``: converts the given value (not called when absent);
    ``when_absent``: what the analysis does when its default is None (shown as the default, e.g.
    ``holm; none with --clusters mtme``) where the word "none" would mislead; ``complete``: values
    the shell completes when the help lists them in its own words (the level names)."""

    def build():
        p = signature(target).get(keyword)
        if p is None:
            raise LookupError(f"metaeval.{target} has no keyword {keyword!r} with a default")
        kind = type or _kind(p)
        flag = "--" + (name or keyword).replace("_", "-")
        old = tuple(aliases if aliases is not None else OLD_SPELLINGS.get(keyword, ()))
        text = (help if help is not None else _CLI_HELP.get(keyword, p.doc)) or ""
        if help is None and keyword in _CLI_HELP_OUTSIDE and not target.startswith(_CLI_HELP_OUTSIDE[keyword][0]):
            text = _CLI_HELP_OUTSIDE[keyword][1]
        if kind in (int, float) and p.default is None:
            text = text.replace("(none: ", "(not set: ")  # a number option refuses the word none
        if prefix and text[:2].istitle():  # "openai: the API root"
            text = text[0].lower() + text[1:]
        if choices and "|".join(choices) not in text:
            text = f"{'|'.join(choices)}: {text}".rstrip(": ")
        text = prefix + text  # "Correlation design: bonferroni|holm|bh|none: multiple-testing ..."
        if when_absent is not None and p.default is not None:
            raise LookupError(f"{flag}: when_absent is for a None default; {target} has {p.default!r}")
        default_text = when_absent if when_absent is not None else shown(p.default, kind, keyword)
        text = f"{text} [default: {default_text}]".strip()
        kw = dict(default=None, show_default=False, help=text, hidden=hidden, metavar=metavar)
        decls = [f"{flag}/--no-{flag[2:]}" if kind is bool else flag, *old, name or keyword]
        if kind is bool:
            kw.update(is_flag=True)
        elif kind is list:
            item = int if "int" in p.annotation else str
            kw.update(type=Registry(choices or complete, many=True) if choices or complete else click.STRING)
            conv = _split_list(item)
            if callback is None:
                kw["callback"] = conv
        else:
            ptype = {int: click.INT, float: click.FLOAT, str: click.STRING}[kind]
            if keyword in ("rng", "seed") and p.default is None:
                ptype = SEED  # its message says that leaving it out draws fresh entropy
            kw["type"] = (click.Choice(tuple(strict_choices)) if strict_choices
                          else Registry(choices or complete) if choices or complete else ptype)
        if callback is not None:
            kw["callback"] = lambda ctx, prm, v: None if v is None else callback(ctx, prm, v)
        return ApiOption(decls, api_target=target, api_keyword=keyword, aliases=old, api_default=p.default,
                         api_kind=kind, when_absent=when_absent,
                         **{k: v for k, v in kw.items() if v is not None or k == "default"})

    def deco(f):
        if not hasattr(f, "__click_params__"):
            f.__click_params__ = []
        f.__click_params__.append(_Pending(build))
        return f

    return deco


class _Pending:
    """An option not built yet: its signature and docstring are read when the command's
    parameters are first looked at (:class:`ApiCommand`)."""

    def __init__(self, build):
        self.build = build


class ApiCommand(click.Command):
    """A command whose generated options (:func:`api_option`) are built on first use of its
    parameters: importing a module of several commands reads only the signatures of the one
    that runs (or whose help is shown)."""

    @property
    def params(self):
        params = self.__dict__.setdefault("_params", [])
        if any(isinstance(p, _Pending) for p in params):
            params[:] = [p.build() if isinstance(p, _Pending) else p for p in params]
        return params

    @params.setter
    def params(self, value):
        self.__dict__["_params"] = value


def command(*args, **kw):
    """``click.command`` making an :class:`ApiCommand`."""
    return click.command(*args, cls=ApiCommand, **kw)


def api_options(target, /, *keywords, **per_keyword):
    """Options for several keywords of ``target``: ``per_keyword`` maps a keyword to the
    keyword arguments of :func:`api_option` for it (e.g. ``average=dict(choices=AVERAGES)``)."""

    def deco(f):
        for k in reversed(keywords):
            f = api_option(target, k, **per_keyword.get(k, {}))(f)
        return f

    return deco


def given(values):
    """The keyword arguments that were given on the command line (absent options are None)."""
    return {k: v for k, v in values.items() if v is not None}
