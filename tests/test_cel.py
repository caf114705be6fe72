"""The DRA CEL environment: parse/type/version/cost outcomes per target minor, evaluation semantics,
and DRA601 positions in every YAML scalar style."""

from __future__ import annotations

import pytest

from dralint.cel import CelError, Environment, Quantity, Semver
from dralint.cel.runtime import Device, DomainMap

from .conftest import lint_text

# -------------------------------------------------------------------------------------------------
# outcome table: expression -> (outcome on a 1.34 target, outcome on a 1.37 target)
# ok | syntax | type | unavailable | cost | runtime (compiles, but fails on every evaluation)

GPU = 'device.attributes["gpu.nvidia.com"]'
MEM = 'device.capacity["gpu.nvidia.com"].memory'

TABLE: list[tuple[str, str, str]] = [
    # reference §7.5, valid
    ('device.driver == "gpu.example.com"', "ok", "ok"),
    ('device.attributes["gpu.example.com"].model == "a100"', "ok", "ok"),
    ('"memory" in device.capacity["gpu.example.com"] && '
     'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0', "ok", "ok"),
    ('device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("16Gi"))', "ok", "ok"),
    ('device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("550.0.0"))', "ok", "ok"),
    ('cel.bind(g, device.attributes["gpu.example.com"], g.?cores.orValue(0) >= 8 && g.?numa.orValue(-1) == 0)',
     "ok", "ok"),
    ('device.attributes["net.example.com"].?ifName.orValue("").matches("^eth[0-9]+$")', "ok", "ok"),
    # reference §7.5, gated: allowMultipleAllocations needs DRAConsumableCapacity (off in 1.34, on in 1.37)
    ("device.allowMultipleAllocations == true", "unavailable", "ok"),
    # includes() needs DRAListTypeAttributes (off by default in both)
    ('device.attributes["dra.example.com"].models.includes("m1")', "unavailable", "unavailable"),
    # reference §7.5, invalid
    ('device.attributes.model == "a100"', "type", "type"),
    ('device.capacity["gpu.example.com"].memory >= quantity("40Gi")', "type", "type"),
    ("device.driver", "type", "type"),
    ('device.driver = "x"', "syntax", "syntax"),
    ('device.attributes["gpu.example.com"].missing == 1', "ok", "ok"),  # a run-time error, not a compile error
    ('device.attributes["gpu.example.com"].model == 7', "ok", "ok"),
    ('device.attributes["dra.example.com"].supported-models.includes("a")', "type", "type"),
    # the generated corpus' selector pool
    ('device.driver == "gpu.nvidia.com"', "ok", "ok"),
    (f'{GPU}.productName == "NVIDIA A100-SXM4-80GB"', "ok", "ok"),
    (f'{MEM}.isGreaterThan(quantity("20Gi"))', "ok", "ok"),
    (f'{MEM}.compareTo(quantity("48Gi")) >= 0', "ok", "ok"),
    (f'{GPU}.architecture == "Ada Lovelace"', "ok", "ok"),
    (f'{GPU}.driverVersion.isGreaterThan(semver("550.54.15"))', "ok", "ok"),
    (f'{GPU}.cudaComputeCapability.compareTo(semver("8.0.0")) >= 0', "ok", "ok"),
    (f'"gpu.nvidia.com" in device.attributes && {GPU}.type == "mig"', "ok", "ok"),
    (f"{GPU}.index < 4", "ok", "ok"),
    (f'{GPU}.productName.startsWith("NVIDIA A100")', "ok", "ok"),
    ('device.attributes["resource.kubernetes.io"].pcieRoot != ""', "ok", "ok"),
    # the corpus' deliberately broken forms
    (f'{GPU}.productName == "NVIDIA A100" &&', "syntax", "syntax"),
    (f'{GPU}.productName == "NVIDIA A100', "syntax", "syntax"),
    (f'{GPU}.productName == ', "syntax", "syntax"),
    ('devcie.driver == "gpu.nvidia.com"', "type", "type"),
    # the real corpus (NVIDIA demo specs)
    ("device.attributes['gpu.nvidia.com'].profile == '1g.5gb'", "ok", "ok"),
    ("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig' && "
     "device.attributes['gpu.nvidia.com'].profile == '1g.12gb'", "ok", "ok"),
    ("(device.attributes['gpu.nvidia.com'].index == 0 ||\n"
     "device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*a100.*$'))", "ok", "ok"),
    # type errors
    (f'{MEM} > "20Gi"', "type", "type"),
    (f"{MEM} > 20", "type", "type"),
    (f'{MEM}.isGreaterThan("20Gi")', "type", "type"),
    (f'{GPU}.productName.contains("A1")', "ok", "ok"),  # the receiver is dynamic: any string method fits
    (f'{GPU}.productName.contains(1)', "type", "type"),  # ... but the argument still has to
    ('device.driver.contains(1)', "type", "type"),
    ('size(device.driver) > "3"', "type", "type"),
    ('[1, "a"].size() == 2', "type", "type"),
    ('device.notAField == "x"', "type", "type"),
    ('fooBar(device.driver)', "type", "type"),
    ('device.driver.fooBar()', "type", "type"),
    ('"a".matches("(a)\\\\1")', "type", "type"),  # back-references are not RE2
    ('quantity("20Gi").sign() == 1', "type", "type"),  # sign() is a global function in Kubernetes
    ('sign(quantity("20Gi")) == 1', "ok", "ok"),
    ('quantity("20Gi").mul(2).isGreaterThan(quantity("30Gi"))', "unavailable", "unavailable"),
    ('device.driver == "x" ? 1 : "a"', "type", "type"),
    # literals that fail on every evaluation
    ('quantity("20GB").isLessThan(quantity("1Gi"))', "runtime", "runtime"),
    ('semver("8.0") == semver("8.0.0")', "runtime", "runtime"),
    # per-version availability: the API server checks new selectors against the previous minor's environment
    ("[3, 1, 2].sortBy(x, x)[0] == 1", "unavailable", "ok"),  # lists extension v3: 1.34 env -> 1.35+
    ("lists.range(3).size() == 3", "unavailable", "ok"),
    ("[1, 2].distinct().size() == 2", "unavailable", "ok"),
    ('[1, 2].all(i, v, v > i)', "ok", "ok"),  # two-variable comprehensions: 1.32 env -> 1.33+
    ('semver("v1.2", true).major() == 1', "ok", "ok"),  # normalising semver: 1.33 env -> 1.34+
    ('format.dns1123Label().validate(device.driver).hasValue() == false', "ok", "ok"),
    ('ip("10.0.0.1").family() == 4 && cidr("10.0.0.0/8").containsIP("10.1.2.3")', "ok", "ok"),
    ('sets.contains(["a", "b"], ["a"])', "ok", "ok"),
    ('"abc".upperAscii().lowerAscii() == "abc" && "a,b".split(",").size() == 2', "ok", "ok"),
    ('device.driver.find("[a-z]+") == "gpu" && [1, 2, 3].sum() == 6', "ok", "ok"),
    ('optional.none().orValue(3) == 3 && optional.of(1).hasValue()', "ok", "ok"),
    ("[1, 2, 3].map(x, x * 2).filter(y, y > 2).exists_one(z, z == 4)", "ok", "ok"),
    ("has(device.attributes.foo) || device.attributes.exists(d, d == 'x')", "ok", "ok"),
    ("[1, 2].transformList(i, v, v * i) == [0, 2]", "ok", "ok"),
    ('{"a": 1}.transformMap(k, v, v + 1) == {"a": 2}', "ok", "ok"),
    ("dyn(1) == 1.0 && 1 < 1.5 && 2u > 1", "ok", "ok"),
    ("1 == 1.0", "type", "type"),
    ("-1u == 1u", "type", "type"),
    ("9223372036854775808 > 0", "syntax", "syntax"),
    ("-9223372036854775808 < 0", "ok", "ok"),
    ("'''multi\nline''' != r'raw\\n' && b'\\xff' != b''", "ok", "ok"),
    ("if == 1", "syntax", "syntax"),
    ('device.attributes["dra.example.com"].package == "x"', "ok", "ok"),  # reserved words are fine as fields
    ('device.attributes["dra.example.com"].in == "x"', "syntax", "syntax"),
    ("device.driver == 'a' && (device.driver == 'b'", "syntax", "syntax"),
    ("device.attributes['a'].x === 1", "syntax", "syntax"),
    # cost
    ("lists.range(2000).exists(i, lists.range(2000).exists(j, i == j))", "unavailable", "cost"),
    ('[1, 2, 3].exists(i, [1, 2, 3].exists(j, i == j))', "ok", "ok"),
    ("x" * 10241, "cost", "cost"),
]


def _outcome(expr: str, minor: str, gates: dict[str, bool] | None = None) -> str:
    prog = Environment.for_target(minor, gates or {}).compile(expr)
    for code in ("syntax", "type", "unavailable", "cost", "runtime"):
        if any(d.code == code for d in prog.diags):
            return code
    return "ok"


@pytest.mark.parametrize(("expr", "on134", "on137"), TABLE, ids=[e[:50] for e, _, _ in TABLE])
def test_outcome_table(expr: str, on134: str, on137: str) -> None:
    assert _outcome(expr, "1.34") == on134
    assert _outcome(expr, "1.37") == on137


def test_table_is_large_enough() -> None:
    assert len(TABLE) >= 40
    assert {o for _, a, b in TABLE for o in (a, b)} >= {"ok", "syntax", "type", "unavailable", "cost", "runtime"}


def test_quantity_arithmetic_on_a_later_server() -> None:
    prog = Environment.for_target("1.38", {}).compile('quantity("10k").div(4).compareTo(quantity("2500")) == 0 && '
                                                      'quantity("10").divInt(3) == quantity("3") && '
                                                      'quantity("1Gi").mul(2) == quantity("2Gi")')
    assert prog.ok, prog.diags
    assert prog.evaluate(_device()) is True


def test_gates_turn_functions_on() -> None:
    expr = 'device.attributes["dra.example.com"].models.includes("m1")'
    assert _outcome(expr, "1.36", {"DRAListTypeAttributes": True}) == "ok"
    assert _outcome(expr, "1.35", {"DRAListTypeAttributes": True}) == "unavailable"  # gate did not exist yet
    assert _outcome("device.allowMultipleAllocations", "1.35", {"DRAConsumableCapacity": True}) == "ok"
    assert _outcome("device.allowMultipleAllocations", "1.33", {"DRAConsumableCapacity": True}) == "unavailable"


def test_unavailable_message_names_the_version() -> None:
    prog = Environment.for_target("1.34", {}).compile("[3, 1].sortBy(x, x)[0] == 1")
    msg = next(d.message for d in prog.diags if d.code == "unavailable")
    assert "1.35" in msg and "1.34" in msg


def test_programs_are_compiled_once_per_environment() -> None:
    env = Environment.for_target("1.37", {})
    a = env.compile('device.driver == "cached.example.com"')
    assert env.compile('device.driver == "cached.example.com"') is a
    assert Environment.for_target("1.34", {}).compile('device.driver == "cached.example.com"') is not a


def test_syntax_error_columns_match_cel_go() -> None:
    env = Environment.for_target("1.37", {})
    # cel-go: <input>:1:52: Syntax error: mismatched input '<EOF>' ...
    d = env.compile(f"{GPU}.productName == ").diags[0]
    assert (d.code, d.start + 1) == ("syntax", len(f"{GPU}.productName == ") + 1)
    # the unterminated string is reported at its opening quote
    d = env.compile('device.driver == "gpu').diags[0]
    assert d.start == len("device.driver == ")
    d = env.compile('device.driver = "x"').diags[0]
    assert d.start == len("device.driver ")


# -------------------------------------------------------------------------------------------------
# evaluation


def _device(**attrs: object) -> Device:
    a = {"productName": "NVIDIA A100-SXM4-80GB", "type": "gpu", "driverVersion": Semver.parse("580.126.20"),
         "cudaComputeCapability": Semver.parse("8.0.0"), "architecture": "Ampere"}
    a.update(attrs)
    return Device(driver="gpu.nvidia.com", allowMultipleAllocations=False,
                  attributes=DomainMap({"gpu.nvidia.com": a, "resource.kubernetes.io": {"pcieRoot": "pci0000:64"}}),
                  capacity=DomainMap({"gpu.nvidia.com": {"memory": Quantity.parse("80Gi")}}))


EVAL: list[tuple[str, bool | str]] = [
    (f'{GPU}.productName == "NVIDIA A100-SXM4-80GB"', True),
    (f'{MEM}.compareTo(quantity("40Gi")) >= 0', True),
    (f'{MEM}.isGreaterThan(quantity("81920Mi"))', False),
    (f'{MEM}.compareTo(quantity("85899345920")) == 0', True),
    (f'{GPU}.driverVersion.isGreaterThan(semver("550.54.15"))', True),
    (f'{GPU}.cudaComputeCapability.compareTo(semver("9.0.0")) < 0', True),
    (f"{GPU}.index == 0", "error"),  # unknown attribute: a run-time error, not false
    ('device.attributes["other.example.com"].size() == 0', True),  # unknown domain: empty map
    ('device.attributes["other.example.com"].model == "x"', "error"),
    (f'device.driver == "other" && {GPU}.index == 0', False),  # false && error = false
    (f'{GPU}.index == 0 && device.driver == "other"', False),  # error && false = false (commutative)
    (f'{GPU}.index == 0 || device.driver == "gpu.nvidia.com"', True),
    (f"has({GPU}.index)", False),
    (f'"index" in {GPU}', False),
    (f"{GPU}.?index.orValue(-1) == -1", True),
    (f"{GPU}.productName == 7", False),  # heterogeneous equality is false, not an error
    (f"{GPU}.productName > 7", "error"),
    ('cel.bind(g, device.attributes["gpu.nvidia.com"], g.type == "gpu" && g.architecture in ["Ampere", "Hopper"])',
     True),
    ('device.attributes.exists(d, d == "resource.kubernetes.io")', True),
    (f'{GPU}.productName.lowerAscii().matches("a100")', True),
    ("lists.range(2000).exists(i, lists.range(2000).exists(j, i * j == -1))", "error"),  # cost limit at run time
    ('quantity("1k").add(24).asInteger() == 1024 && quantity("1.5").isInteger() == false', True),
    ("9223372036854775807 + 1 > 0", "error"),  # int64 overflow
    ("7 / 2 == 3 && -7 / 2 == -3 && -7 % 3 == -1", True),
]


@pytest.mark.parametrize(("expr", "want"), EVAL, ids=[e[:50] for e, _ in EVAL])
def test_evaluation(expr: str, want: bool | str) -> None:
    prog = Environment.for_target("1.37", {}).compile(expr)
    assert not [d for d in prog.diags if d.code != "cost"], prog.diags
    if want == "error":
        with pytest.raises(CelError):
            prog.evaluate(_device())
    else:
        assert prog.evaluate(_device()) is want


def test_hostile_regex_is_linear() -> None:
    prog = Environment.for_target("1.37", {}).compile(f'{GPU}.productName.matches("(a+)+$")')
    assert prog.evaluate(_device(productName="a" * 5000 + "!")) is False


def test_hostile_selectors_stop_with_an_error() -> None:
    env = Environment.for_target("1.37", {})
    doubling = "size(v29) > 0"
    for i in reversed(range(30)):
        prev = "a" if i == 0 else f"v{i - 1}"
        doubling = f"cel.bind(v{i}, {prev} + {prev}, {doubling})"
    blowup = "'a'" + "".join(f".replace('{c}', '{d * 60}')" for c, d in zip("abcd", "bcde", strict=True)) + " == ''"
    for expr in (f"cel.bind(a, 'xxxxxxxxxx', {doubling})", blowup,
                 "lists.range(1000).map(i, lists.range(1000).map(j, i + j)).size() > 0"):
        prog = env.compile(expr)
        assert prog.ast is not None
        with pytest.raises(CelError):
            prog.evaluate(_device())


def test_quantity_semantics() -> None:
    assert Quantity.parse("1Gi") == Quantity.parse("1024Mi")
    assert Quantity.parse("200M").compare(Quantity.parse("0.2G")) == 0
    assert Quantity.parse("50M").compare(Quantity.parse("50Mi")) == -1
    assert not Quantity.valid("200K") and not Quantity.valid("Mi") and not Quantity.valid("1,3G")
    assert Quantity.parse("9999999999999999999999999999999999999G").is_integer() is False
    assert Quantity.parse("0.1n").value > 0  # sub-nano precision rounds up


def test_semver_semantics() -> None:
    assert Semver.parse("1.2.3-alpha") < Semver.parse("1.2.3")
    assert Semver.parse("1.2.3-alpha.1") < Semver.parse("1.2.3-alpha.beta")
    assert Semver.parse("1.2.3+build") == Semver.parse("1.2.3")
    assert not Semver.valid("01.2.3") and not Semver.valid("v1.2.3") and Semver.valid("v1.2", normalize=True)


# -------------------------------------------------------------------------------------------------
# DRA601 positions in every scalar style: the finding sits on the offending character in the file

_CLAIM = """apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: c
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.nvidia.com
        selectors:
        - cel:
            expression: {value}
"""

# (YAML value, the text right before the offending character in the file, expected column in the expression)
STYLES = [
    ('device.driver = "gpu.nvidia.com"', "expression: device.driver ", 15),
    ("'device.driver = ''gpu.nvidia.com'''", "expression: 'device.driver ", 15),
    ('"device.attributes[\\"gpu.nvidia.com\\"].type = \\"gpu\\""',
     'expression: "device.attributes[\\"gpu.nvidia.com\\"].type ', 42),
    ('"device.driver == \\"x\\" &&\\n  device.driver = \\"y\\""', "&&\\n  device.driver ", None),
    ("|\n              device.driver == \"x\" &&\n                device.driver = \"y\"",
     "                device.driver ", None),
    ("|-\n              device.driver = \"x\"", "              device.driver ", 15),
    (">\n              device.driver == \"x\"\n              && device.driver = \"y\"",
     "              && device.driver ", None),
    (">-\n              device.driver == \"x\" &&\n\n              device.driver = \"y\"",
     "\n\n              device.driver ", None),
    ("device.driver == \"x\" &&\n              device.driver = \"y\"", "              device.driver ", None),
    ("'device.driver == \"x\"\n              && device.driver = \"y\"'", "              && device.driver ", None),
]


@pytest.mark.parametrize(("value", "before", "column"), STYLES, ids=[f"style{i}" for i in range(len(STYLES))])
def test_syntax_error_position_in_every_scalar_style(value: str, before: str, column: int | None) -> None:
    text = _CLAIM.format(value=value)
    result = lint_text(text, select=["DRA601"])
    [f] = result.findings
    offset = text.index(before) + len(before)
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    assert (f.line, f.column) == (line, col), f.message
    assert text[offset] == "="
    assert f"file line {line}, column {col}" in f.message
    if column is not None:
        assert f"column {column} of the expression" in f.message


def test_syntax_error_position_in_a_list_item_and_crlf_file() -> None:
    text = ("apiVersion: v1\r\nkind: List\r\nitems:\r\n- apiVersion: resource.k8s.io/v1\r\n  kind: DeviceClass\r\n"
            "  metadata: {name: x}\r\n  spec:\r\n    selectors:\r\n    - cel:\r\n        expression: >\r\n"
            "          device.driver ==\r\n          \"a\" && &&\r\n")
    [f] = lint_text(text, select=["DRA601"]).findings
    assert (f.line, f.column) == (12, 18)  # the second `&&`


def test_type_error_points_at_the_operator() -> None:
    text = _CLAIM.format(value='device.capacity["gpu.nvidia.com"].memory > "20Gi"')
    [f] = lint_text(text, select=["DRA603"]).findings
    assert text.splitlines()[f.line - 1][f.column - 1] == ">"
    assert "Quantity" in f.message and "compareTo" in f.message


def test_unknown_attribute_fix_is_case_only() -> None:
    text = _CLAIM.format(value='device.attributes["gpu.nvidia.com"].productname == "x"')
    [f] = lint_text(text, select=["DRA602"]).findings
    assert f.fix is not None and "did you mean `productName`" in f.message
    assert "run-time error" in f.message
    [edit] = f.fix.edits
    assert edit.op == "set" and edit.value == 'device.attributes["gpu.nvidia.com"].productName == "x"'
    text = _CLAIM.format(value='device.attributes["gpu.nvidia.com"]["productname"] == "x"')
    [f] = lint_text(text, select=["DRA602"]).findings
    assert f.fix is not None and f.fix.edits[0].value == 'device.attributes["gpu.nvidia.com"]["productName"] == "x"'
    text = _CLAIM.format(value='device.attributes["gpu.nvidia.com"].productNam == "x"')
    [f] = lint_text(text, select=["DRA602"]).findings
    assert f.fix is None and "did you mean `productName`" in f.message


def test_unknown_attribute_through_bind_and_guards() -> None:
    text = _CLAIM.format(value="'cel.bind(g, device.attributes[\"gpu.nvidia.com\"], has(g.minor) && g.typ == \"x\")'")
    msgs = sorted(f.message for f in lint_text(text, select=["DRA602"]).findings)
    assert len(msgs) == 2
    assert any("`minor` was removed" in m and "never matches" in m for m in msgs)
    assert any("did you mean `type`" in m and "run-time error" in m for m in msgs)


def test_selectors_of_every_request_shape() -> None:
    text = """apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata: {name: t}
spec:
  spec:
    devices:
      requests:
      - name: flat
        deviceClassName: gpu.nvidia.com
        selectors:
        - cel: {expression: "device.driver = 'x'"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: u}
spec:
  spec:
    devices:
      requests:
      - name: pref
        firstAvailable:
        - name: a
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel: {expression: "device.driver = 'x'"}
"""
    assert [f.line for f in lint_text(text, select=["DRA601"]).findings] == [11, 25]


def test_attribute_of_another_device_type() -> None:
    claim = _CLAIM.replace("deviceClassName: gpu.nvidia.com", "deviceClassName: {cls}")
    value = "'device.attributes[\"gpu.nvidia.com\"].profile == \"1g.5gb\"'"
    [f] = lint_text(claim.format(cls="gpu.nvidia.com", value=value), select=["DRA602"]).findings
    assert "not published on gpu devices" in f.message and "run-time error" in f.message
    assert lint_text(claim.format(cls="mig.nvidia.com", value=value), select=["DRA602"]).findings == []
    guarded = "'has(device.attributes[\"gpu.nvidia.com\"].profile)'"
    assert lint_text(claim.format(cls="gpu.nvidia.com", value=guarded), select=["DRA602"]).findings == []


def test_repeated_unknown_name_is_one_finding_with_one_fix() -> None:
    value = ("'device.attributes[\"gpu.nvidia.com\"].productname == \"a\" || "
             "device.attributes[\"gpu.nvidia.com\"][\"productname\"] == \"b\"'")
    [f] = lint_text(_CLAIM.format(value=value), select=["DRA602"]).findings
    assert "reads it 2 times" in f.message
    assert f.fix is not None and f.fix.edits[0].value == (
        'device.attributes["gpu.nvidia.com"].productName == "a" || '
        'device.attributes["gpu.nvidia.com"]["productName"] == "b"')


def test_every_library_has_availability_data() -> None:
    from dralint.cel.decls import DECLS, MACRO_LIBS
    from dralint.cel.env import data

    declared = {o.lib for ovs in DECLS.values() for o in ovs} | set(MACRO_LIBS.values())
    assert declared == set(data()["libraries"])
    for name, spec in data()["libraries"].items():
        assert ("introduced" in spec) != ("server" in spec), name
        assert spec.get("functions") and spec.get("title"), name
