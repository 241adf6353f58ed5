"""Citations and docstring markup for the report's prose.

* :data:`PAPERS` -- the five papers that specify metaeval's methods (the
  repository calls them "seed paper 000" ... "004"), with full citations;
  :func:`cite` rewrites "seed paper 000" in any text to an author-year
  citation, "(Gao et al., 2025)" or "Gao et al. (2025)".
* :func:`latex_text` -- a LaTeX formula (``:math:`...``` or a ``.. math::``
  block of a docstring) as readable Unicode text, so the methods appendix
  shows formulas, never raw LaTeX.
* :func:`bibtex` -- the entry to cite metaeval itself.
"""

from __future__ import annotations

import re

from .._version import __version__

#: key -> (short citation, full citation, BibTeX key)
PAPERS = {
    "000": ("Gao et al., 2025",
            "Mingqi Gao, Xinyu Hu, Li Lin, and Xiaojun Wan. 2025. Analyzing and Evaluating Correlation Measures "
            "in NLG Meta-Evaluation. In Proceedings of the 2025 Conference of the Nations of the Americas "
            "Chapter of the Association for Computational Linguistics: Human Language Technologies (Volume 1: "
            "Long Papers), pages 2199-2222, Albuquerque, New Mexico. Association for Computational Linguistics. "
            "doi:10.18653/v1/2025.naacl-long.111"),
    "001": ("Sheng et al., 2024",
            "Shuqian Sheng, Yi Xu, Luoyi Fu, Jiaxin Ding, Lei Zhou, Xinbing Wang, and Chenghu Zhou. 2024. Is "
            "Reference Necessary in the Evaluation of NLG Systems? When and Where? In Proceedings of the 2024 "
            "Conference of the North American Chapter of the Association for Computational Linguistics: Human "
            "Language Technologies (NAACL 2024). arXiv:2403.14275"),
    "002": ("Xiao et al., 2023",
            "Ziang Xiao, Susu Zhang, Vivian Lai, and Q. Vera Liao. 2023. Evaluating Evaluation Metrics: A "
            "Framework for Analyzing NLG Evaluation Metrics using Measurement Theory. In Proceedings of the 2023 "
            "Conference on Empirical Methods in Natural Language Processing (EMNLP 2023). Association for "
            "Computational Linguistics"),
    "003": ("Shimorina, 2018",
            "Anastasia Shimorina. 2018. Human vs Automatic Metrics: on the Importance of Correlation Design. "
            "arXiv:1805.11474"),
    "004": ("Deviyani and Diaz, 2025",
            "Athiya Deviyani and Fernando Diaz. 2025. Contextual Metric Meta-Evaluation by Measuring Local "
            "Metric Accuracy. In Findings of the Association for Computational Linguistics: NAACL 2025. "
            "Association for Computational Linguistics. arXiv:2503.19828"),
}

_KEY = r"00[0-4]"
_SEED = re.compile(rf"\b[Ss]eed papers? ({_KEY}(?:(?:,\s*|\s+and\s+|\s*/\s*|\s*&\s*){_KEY})*)"
                   r"(\s*\([A-Z][^()]*?(?:19|20)\d\d\))?")


def _inside_parentheses(text, pos):
    depth = 0
    for ch in text[:pos]:
        depth += ch == "("
        depth -= ch == ")" and depth > 0
    return depth > 0


def cite(text):
    """``text`` with every "seed paper 00k" (also "seed papers 001 and 003",
    and a following "(Shimorina 2018)" it makes redundant) replaced by an
    author-year citation: "Gao et al., 2025" inside parentheses, else
    "Gao et al. (2025)"."""

    def sub(m):
        keys = re.findall(_KEY, m.group(1))
        inner = _inside_parentheses(text, m.start())
        out = []
        for k in keys:
            short = PAPERS[k][0]
            if inner:
                out.append(short)
            else:
                name, year = short.rsplit(", ", 1)
                out.append(f"{name} ({year})")
        joined = "; ".join(out) if inner else (", ".join(out[:-1]) + " and " + out[-1] if len(out) > 1 else out[0])
        return joined if inner else joined

    return _SEED.sub(sub, text)


def cited_papers(text):
    """The keys of the papers ``text`` cites as "seed paper 00k", in order."""
    out = []
    for m in _SEED.finditer(text):
        out += re.findall(_KEY, m.group(1))
    return list(dict.fromkeys(out))


def references():
    """The reference list: ``[{"key", "short", "full"}]``."""
    return [{"key": k, "short": s, "full": f} for k, (s, f) in PAPERS.items()]


def bibtex():
    """A BibTeX entry for metaeval (this version)."""
    year = "2026"
    return ("@software{metaeval,\n"
            "  title   = {metaeval: meta-evaluation of NLG evaluation metrics},\n"
            "  author  = {{The metaeval developers}},\n"
            f"  version = {{{__version__}}},\n"
            f"  year    = {{{year}}},\n"
            "  note    = {Python library and command-line tool; cite the version and the signatures of the "
            "numbers you report}\n"
            "}")


# ----------------------------------------------------------------------------- LaTeX as text

_SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ",
    "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "upsilon": "υ", "phi": "φ", "varphi": "φ", "chi": "χ",
    "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π",
    "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
    "sum": "Σ", "prod": "Π", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠",
    "approx": "≈", "cdot": "·", "times": "×", "pm": "±", "infty": "∞", "in": "∈", "notin": "∉", "to": "→",
    "rightarrow": "→", "leftarrow": "←", "ldots": "…", "dots": "…", "cdots": "⋯", "sim": "~", "propto": "∝",
    "mid": "|", "lvert": "|", "rvert": "|", "vert": "|", "Vert": "‖", "|": "‖", "partial": "∂", "forall": "∀",
    "exists": "∃", "cap": "∩", "cup": "∪", "subset": "⊂", "subseteq": "⊆", "equiv": "≡", "neg": "¬",
    "land": "∧", "lor": "∨", "circ": "∘", "prime": "′", "star": "*", "ast": "*", "langle": "⟨", "rangle": "⟩",
    "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉", "quad": " ", "qquad": "  ", ",": " ", ";": " ",
    ":": " ", "!": "", " ": " ", "{": "{", "}": "}", "_": "_", "%": "%", "&": "&", "#": "#",
    "sup": "sup", "inf": "inf", "min": "min", "max": "max", "log": "log", "ln": "ln", "exp": "exp",
    "arg": "arg", "det": "det", "tr": "tr", "Pr": "Pr", "lim": "lim", "sqrt": "√",
}
_DROP = {"left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "displaystyle",
         "limits", "nolimits"}
_TEXT = {"text", "mathrm", "mathit", "mathbf", "mathsf", "mathtt", "operatorname", "textrm", "textit", "textbf",
         "mbox", "boldsymbol", "mathcal", "mathbb"}
_ACCENT = {"tilde": "\u0303", "hat": "\u0302", "widehat": "\u0302", "widetilde": "\u0303", "bar": "\u0304",
           "overline": "\u0304", "dot": "\u0307", "ddot": "\u0308", "vec": "\u20d7"}
_SUP = dict(zip("0123456789+-=()nijkT", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱʲᵏᵀ"))
_SUB = dict(zip("0123456789+-=()aeijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ"))


def _group(s, i):
    """The argument at ``s[i:]``: a {braced group} or one character / command; returns (arg, end)."""
    while i < len(s) and s[i] == " ":
        i += 1
    if i >= len(s):
        return "", i
    if s[i] == "{":
        depth, j = 0, i
        while j < len(s):
            depth += s[j] == "{"
            depth -= s[j] == "}"
            if depth == 0:
                return s[i + 1:j], j + 1
            j += 1
        return s[i + 1:], len(s)
    if s[i] == "\\":
        m = re.match(r"\\([A-Za-z]+|.)", s[i:])
        return m.group(0), i + len(m.group(0))
    return s[i], i + 1


def _script(arg, table, mark):
    text = latex_text(arg)
    if text and all(c in table for c in text):
        return "".join(table[c] for c in text)
    return f"{mark}{text}" if len(text) == 1 else f"{mark}({text})"


def _wrap(t):
    return t if re.fullmatch(r"[\w.′]+", t) else f"({t})"


def latex_text(s):
    """A LaTeX math string as plain Unicode text (no backslashes or braces).

    Greek letters and operators become their symbols, ``\\frac{a}{b}``
    becomes ``a/b`` (parenthesised when needed), ``\\sqrt{x}`` ``√x``,
    accents combining characters, and sub/superscripts Unicode sub/superscripts
    where they exist, else ``_(...)`` / ``^(...)``.
    """
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            m = re.match(r"\\([A-Za-z]+|.)", s[i:])
            name = m.group(1)
            i += len(m.group(0))
            if name in _DROP:
                continue
            if name in ("frac", "dfrac", "tfrac"):
                a, i = _group(s, i)
                b, i = _group(s, i)
                out.append(f"{_wrap(latex_text(a))}/{_wrap(latex_text(b))}")
            elif name == "sqrt":
                a, i = _group(s, i)
                out.append("√" + _wrap(latex_text(a)))
            elif name in _TEXT:
                a, i = _group(s, i)
                out.append(latex_text(a) if name not in ("text", "textrm", "mbox") else a)
            elif name in _ACCENT:
                a, i = _group(s, i)
                t = latex_text(a)
                out.append(t + _ACCENT[name] if len(t) == 1 else f"{t}{_ACCENT[name]}")
            else:
                out.append(_SYMBOLS.get(name, name))
                if name.isalpha() and i < len(s) and s[i].isalpha():
                    out.append(" ")
        elif c in "^_":
            a, i = _group(s, i + 1)
            out.append(_script(a, _SUP if c == "^" else _SUB, c))
        elif c in "{}":
            i += 1
        elif c == "~":
            out.append(" ")
            i += 1
        else:
            out.append(c)
            i += 1
    return re.sub(r"[ \t]+", " ", "".join(out)).strip()
