"""What the synthetic corpus is made of: domains, tools, cases, texts (data only).

`tracelab.generate` draws episodes from this catalog. Every string here is
clean: the planted secrets live in `tracelab.generate.LEAK_STRINGS` and never
occur in the catalog, so a leak check over a generated corpus flags exactly
the runs the generator meant to leak.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

Rnd = Callable[[], float]
"""A bound ``random.Random.random``: the generator's only source of chance."""


def pick(rnd: Rnd, seq: Sequence[Any]) -> Any:
    """One element of `seq`, chosen by `rnd` (stable across Python versions)."""
    return seq[int(rnd() * len(seq))]


@dataclass(frozen=True)
class Tool:
    """A tool of one domain and the material its calls and results are drawn from."""

    name: str
    effect: str  # what the tool really does: "read" or "write"
    declared_effect: str | None  # what its definition records (None: not recorded)
    description: str
    parameters: dict[str, Any]
    args: Callable[[Rnd], dict[str, Any]]
    ok: tuple[Any, ...]  # a str becomes the result `text`, anything else `result`
    errors: tuple[str, ...]
    denials: tuple[str, ...]

    def definition(self) -> dict[str, Any]:
        """The entry of an episode's `tools` list."""
        out: dict[str, Any] = {"name": self.name}
        if self.declared_effect is not None:
            out["effect"] = self.declared_effect
        out["description"] = self.description
        out["parameters"] = self.parameters
        return out


@dataclass(frozen=True)
class Case:
    """One eval case: the task, the tool plan an agent follows, how writes fare."""

    case_id: str
    domain: str
    inputs: tuple[str, ...]
    plan: tuple[tuple[str, ...], ...]  # turns of tool names; a turn of 2 is a parallel call
    outputs: tuple[str, ...]
    retrieval: bool = False
    confirm: float = 0.12  # chance a write is put to a person instead of run
    deny: float = 0.08  # chance a write is refused
    deny_read: float = 0.02  # chance a read is refused


@dataclass(frozen=True)
class Domain:
    """An agent family and everything its runs share."""

    name: str
    agent: str
    versions: tuple[str, ...]
    id_styles: tuple[str, ...]  # call-id style of each version (see generate._call_id)
    models: tuple[str, ...]
    timed: bool  # its runtime records `ts` / `duration_ms` on steps
    system: str
    tools: tuple[Tool, ...]
    principals: tuple[dict[str, str], ...]
    think: tuple[str, ...]
    kb: tuple[tuple[str, str, str | None], ...] = ()  # (id, content, superseded_by)
    definitions: list[dict[str, Any]] = field(init=False)
    by_name: dict[str, Tool] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "definitions", [t.definition() for t in self.tools])
        object.__setattr__(self, "by_name", {t.name: t for t in self.tools})


def _schema(required: Sequence[str] = (), **props: str) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {k: {"type": v} for k, v in props.items()},
    }
    if required:
        schema["required"] = list(required)
    return schema


def _plan(text: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(turn.split("+")) for turn in text.split())


def _principals(
    org: str, roles: Sequence[str], people: Sequence[str]
) -> tuple[dict[str, str], ...]:
    return tuple(
        {
            "user_id": f"{org[:2]}-{100 + i}",
            "org_id": org,
            "role": roles[i % len(roles)],
            "email": f"{person}@{org}.test",
        }
        for i, person in enumerate(people)
    )


PEOPLE = (
    "Tomás Ortega", "Mia Becker", "İpek Yılmaz", "Σοφία Παπαδοπούλου", "Chidi Okafor",
    "佐藤 花子", "Zoë Laurent", "Łukasz Nowak", "Ana María Núñez", "Björn Åkesson",
    "Priya Raman", "Kwame Mensah", "Nguyễn Thị Lan", "Oğuz Demir", "Élodie Marchand",
)
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def _eid(rnd: Rnd) -> str:
    return f"e-{100 + int(rnd() * 80)}"


def _acct(rnd: Rnd) -> str:
    return f"ACCT-1{int(rnd() * 9_000_000) + 1_000_000:07d}"


# ------------------------------------------------------------------ shifts
_SHIFT_SLOTS = ("MON-E", "MON-L", "TUE-N", "WED-E", "FRI-L", "SAT-L", "SAT-N", "SUN-E")
_SHIFT_TOOLS = (
    Tool("get_roster", "read", "read", "Roster of one organisation for one ISO week.",
         _schema(["org"], org="string", week="string"),
         lambda r: {"org": pick(r, ("acme", "acme", "acme", "globex")),
                    "week": f"2026-W{40 + int(r() * 12)}"},
         ({"shifts": [{"employee": "Tomás Ortega", "day": "Mon", "slot": "06:00-14:00"},
                      {"employee": "Mia Becker", "day": "Mon", "slot": "14:00-22:00"}]},
          {"shifts": [{"employee": "İpek Yılmaz", "day": "Fri", "slot": "22:00-06:00"}]},
          "7 shifts, 2 open slots (SAT-N, SUN-E)"),
         ("roster service unavailable (503)",),
         ("org mismatch", "caller may only read rosters of their own organisation")),
    Tool("list_employees", "read", "read", "Employees of the caller's organisation.",
         _schema(team="string"),
         lambda r: {"team": pick(r, ("warehouse", "front-desk", "kitchen", "night-ops"))},
         ([{"id": "e-104", "name": "Tomás Ortega"}, {"id": "e-117", "name": "Mia Becker"}],
          [{"id": "e-121", "name": "Σοφία Παπαδοπούλου"}, {"id": "e-133", "name": "İpek Yılmaz"}],
          [{"id": "e-140", "name": "Chidi Okafor"}]),
         ("directory timeout after 10 s",),
         ("team belongs to another site",)),
    Tool("assign_shift", "write", "write", "Assign an employee to a shift slot.",
         _schema(["employee_id", "slot"], employee_id="string", slot="string"),
         lambda r: {"employee_id": _eid(r), "slot": pick(r, _SHIFT_SLOTS)},
         ("assigned", {"assignment": "as-5512", "state": "confirmed"}),
         ("slot already filled (capacity 1)", "employee exceeds 48 h this week"),
         ("assigning night shifts requires the manager role",)),
    Tool("swap_shifts", "write", "write", "Swap the shifts of two employees on one day.",
         _schema(["a", "b", "day"], a="string", b="string", day="string"),
         lambda r: {"a": _eid(r), "b": _eid(r), "day": pick(r, DAYS)},
         ("swapped", {"swap": "sw-204", "state": "done"}),
         ("one of the employees has no shift that day",),
         ("swap requires manager approval",)),
    Tool("notify_employee", "write", "write", "Send a push notification to an employee.",
         _schema(["employee_id", "message"], employee_id="string", message="string"),
         lambda r: {"employee_id": _eid(r),
                    "message": pick(r, ("Your shift changed, see the app.",
                                        "Vardiyan değişti 🙏", "Reminder: late shift today"))},
         ("delivered",),
         ("push gateway rejected the message",),
         ("employee opted out of notifications",)),
)

# ------------------------------------------------------------------ banking
_IBANS = ("DE02 1203 0000 0000 2020 51", "FR76 3000 6000 0112 3456 7890 189",
          "TR33 0006 1005 1978 6457 8413 26", "GB29 NWBK 6016 1331 9268 19")


def _transfer_args(r: Rnd) -> dict[str, Any]:
    args: dict[str, Any] = {
        "from_account": _acct(r),
        "to_iban": pick(r, _IBANS),
        "amount": round(10 + r() * 990, 2),
        "currency": pick(r, ("EUR", "EUR", "USD", "TRY")),
        "reference": pick(r, ("rent", "Kira ödemesi", "dinner 🍕", "invoice 2026-114")),
    }
    if r() < 0.03:  # messy traces carry keys that differ only by case
        args["Amount"] = round(args["amount"] * 10, 2)
    return args


_BANK_TOOLS = (
    Tool("lookup_customer", "read", "read", "Find a customer of the caller's branch.",
         _schema(["query"], query="string"),
         lambda r: {"query": pick(r, PEOPLE)},
         ({"matches": 1, "customer_id": "c-2001"}, {"matches": 0}, {"matches": 2}),
         ("customer index rebuilding, retry later",),
         ("customer belongs to another branch",)),
    Tool("get_balance", "read", "read", "Balance of one account.",
         _schema(["account"], account="string"),
         lambda r: {"account": _acct(r)},
         ({"balance": 1434.2, "currency": "EUR"}, {"balance": 88.05, "currency": "EUR"},
          {"balance": 12650, "currency": "TRY"}),
         ("core banking timeout",),
         ("account not owned by the caller",)),
    Tool("list_transactions", "read", "read", "Transactions of one account, newest first.",
         _schema(["account"], account="string", page="integer"),
         lambda r: {"account": _acct(r), "page": 1 + int(r() * 3)},
         ([{"id": "tx-5520", "merchant": "Café Lumière", "amount": -4.8},
           {"id": "tx-5521", "merchant": "Café Lumière", "amount": -4.8}],
          "20 transactions (Oct 2026)",
          [{"id": "tx-7710", "merchant": "StreamFlix", "amount": -19.99}]),
         ("statement service unavailable (503)",),
         ("account not owned by the caller",)),
    Tool("transfer_money", "write", "write", "Move money between accounts.",
         _schema(["from_account", "to_iban", "amount", "currency"], from_account="string",
                 to_iban="string", amount="number", currency="string", reference="string"),
         _transfer_args,
         ({"transfer_id": "tr-88213", "state": "booked"}, "booked"),
         ("insufficient funds", "beneficiary bank unreachable"),
         ("daily limit exceeded", "source account is not owned by the caller")),
    Tool("issue_refund", "write", "write", "Refund a card transaction.",
         _schema(["transaction_id"], transaction_id="string", amount="number"),
         lambda r: {"transaction_id": f"tx-{1000 + int(r() * 9000)}",
                    "amount": round(r() * 120, 2)},
         ({"refund_id": "rf-301", "state": "pending"},),
         ("payment provider error 502", "transaction already refunded"),
         ("refunds above 100 EUR need a human agent",)),
    Tool("close_account", "write", None, "Close an account for good.",
         _schema(["account"], account="string"),
         lambda r: {"account": _acct(r)},
         ("closed",),
         ("account has a non-zero balance",),
         ("closing needs a signed request",)),
)

# ------------------------------------------------------------------ support
_SUPPORT_TOOLS = (
    Tool("search_kb", "read", "read", "Search the help-centre articles.",
         _schema(["query"], query="string"),
         lambda r: {"query": pick(r, ("refund duration", "return label", "iade süresi",
                                      "change e-mail", "damaged parcel"))},
         ("3 articles: kb-31, kb-07, kb-12", {"hits": ["kb-07"]}, {"hits": []}),
         ("search backend timeout",),
         ()),
    Tool("get_order", "read", "read", "One order of the caller.",
         _schema(["order_id"], order_id="string"),
         lambda r: {"order_id": str(1000 + int(r() * 900))},
         ({"state": "delivered", "on": "2026-11-03"}, {"state": "out_for_delivery"},
          {"state": "shipped", "carrier": "DHL"}, "order not found"),
         ("orders API returned 500",),
         ("order belongs to another customer",)),
    Tool("create_ticket", "write", "write", "Open a support ticket.",
         _schema(["subject"], subject="string", body="string", priority="string"),
         lambda r: {"subject": pick(r, ("Damaged item", "Wrong size", "Hasarlı ürün 📦",
                                        "E-mail change request")),
                    "body": pick(r, ("Customer reports damage on delivery.",
                                     "Customer asks for an exchange.")),
                    "priority": pick(r, ("low", "normal", "high"))},
         ({"ticket": "T-4410"}, {"ticket": "T-4415"}),
         ("ticketing system read-only (maintenance)",),
         ("customer already has an open ticket on this order",)),
    Tool("reset_password", "write", "write", "Send a password-reset link to the account's e-mail.",
         _schema(["user_id"], user_id="string"),
         lambda r: {"user_id": f"k-{800 + int(r() * 100)}"},
         ("reset link sent",),
         ("mail relay unavailable",),
         ("identity not verified",)),
    Tool("send_email", "write", "write", "E-mail a customer.",
         _schema(["to", "subject"], to="string", subject="string", body="string"),
         lambda r: {"to": pick(r, ("kemal.sahin@mail.test", "lena.fischer@mail.test")),
                    "subject": "Your request", "body": "We are on it."},
         ("queued",),
         ("mailbox full",),
         ("recipient is not the account owner",)),
)
_SUPPORT_KB = (
    ("kb-12", "Refunds are processed within 14 days of the return arriving.", "kb-31"),
    ("kb-31", "Refunds are processed within 5 business days of the return arriving.", None),
    ("kb-07", "Returns: print the label from your order page, drop the parcel at a partner shop.",
     None),
    ("kb-19", "İade: etiketi sipariş sayfanızdan yazdırın, paketi bir ortak mağazaya bırakın.",
     None),
    ("kb-22", "To change your e-mail, open Settings > Account and verify the new address.", None),
    ("kb-05", "Damaged parcels: send a photo within 48 h; we ship a replacement.", "kb-23"),
    ("kb-23", "Damaged parcels: send a photo within 7 days; we replace or refund.", None),
)

# ------------------------------------------------------------------ ops
_SERVICES = ("checkout-api", "auth-service", "search-indexer", "payments-worker", "statistika-eu")
_OPS_TOOLS = (
    Tool("get_logs", "read", "read", "Recent log lines of a service.",
         _schema(["service"], service="string", since="string"),
         lambda r: {"service": pick(r, _SERVICES), "since": pick(r, ("15m", "1h", "6h"))},
         ("ERROR pool exhausted (max=50) x 212", "0 errors",
          "ΣΦΆΛΜΑ: disk quota exceeded\u2028(line separator kept inside one record)",
          "WARN slow query 2.3 s x 14"),
         ("log store query timed out",),
         ("service is outside the caller's namespace",)),
    Tool("get_config", "read", "read", "Effective configuration of a service.",
         _schema(["service"], service="string"),
         lambda r: {"service": pick(r, _SERVICES)},
         ({"replicas": 3, "pool_max": 50, "region": "eu-west-1"},
          {"replicas": 6, "pool_max": 200, "region": "us-east-1", "İZMİR_fallback": True}),
         ("config service unavailable",),
         ("secrets are hidden from this role",)),
    Tool("run_query", "read", None, "Read-only SQL against the metrics warehouse.",
         _schema(["sql"], sql="string"),
         lambda r: {"sql": pick(r, ("SELECT count(*) FROM errors WHERE ts > now() - INTERVAL 1 H",
                                    "SELECT route, p95(latency_ms) FROM requests GROUP BY 1"))},
         ({"rows": [[412]]}, {"rows": [["/checkout", 840], ["/login", 95]]}),
         ("query exceeded 30 s",),
         ("warehouse access needs the analyst role",)),
    Tool("restart_service", "write", "write", "Rolling restart of a service.",
         _schema(["service"], service="string"),
         lambda r: {"service": pick(r, _SERVICES)},
         ({"ready": "3/3"}, "restarted"),
         ("pods failed readiness after restart",),
         ("restarts in prod need an SRE",)),
    Tool("scale_deployment", "write", "write", "Set the replica count of a service.",
         _schema(["service", "replicas"], service="string", replicas="integer"),
         lambda r: {"service": pick(r, _SERVICES), "replicas": 1 + int(r() * 12)},
         ({"replicas": 6, "state": "scaling"},),
         ("cluster quota exceeded",),
         ("scaling above 8 replicas needs approval",)),
)

# ------------------------------------------------------------------ travel
_AIRPORTS = ("IST", "ATH", "BER", "NRT", "JFK", "SKG", "LIS")
_TRAVEL_TOOLS = (
    Tool("search_flights", "read", "read", "Search flights for one day.",
         _schema(["from", "to", "date"], **{"from": "string", "to": "string", "date": "string"}),
         lambda r: {"from": pick(r, _AIRPORTS), "to": pick(r, _AIRPORTS),
                    "date": f"2026-12-{1 + int(r() * 28):02d}"},
         ({"flights": [{"flight": "TK1846", "dep": "07:40", "price": 189.0},
                       {"flight": "A3 991", "dep": "12:15", "price": 142.5}]},
          {"flights": []}, "3 flights, cheapest 98 EUR"),
         ("fare service timeout",),
         ()),
    Tool("get_weather", "read", "read", "Weather forecast for a city.",
         _schema(["city"], city="string"),
         lambda r: {"city": pick(r, ("İstanbul", "Θεσσαλονίκη", "東京", "Lisboa", "Berlin"))},
         ({"forecast": "☀️ 18 °C"}, {"forecast": "🌧 9 °C"}, "snow expected"),
         ("weather provider quota exceeded",),
         ()),
    Tool("book_flight", "write", "write", "Book a seat on a flight.",
         _schema(["flight", "passenger"], flight="string", passenger="string", seat="string"),
         lambda r: {"flight": pick(r, ("TK1846", "A3 991", "LH1720")),
                    "passenger": pick(r, PEOPLE), "seat": f"{1 + int(r() * 30)}{pick(r, 'ACDF')}"},
         ({"pnr": "QX7R2L", "state": "ticketed"}, "booked"),
         ("fare no longer available", "payment declined"),
         ("corporate policy forbids business class",)),
    Tool("cancel_booking", "write", None, "Cancel a booking by its reference.",
         _schema(["booking_ref"], booking_ref="string"),
         lambda r: {"booking_ref": pick(r, ("QX7R2L", "PN4K9Z", "ZZ81TT"))},
         ("cancelled", {"refund": 120.0, "currency": "EUR"}),
         ("booking already flown",),
         ("non-refundable fare: cancellation needs an agent",)),
)
_TRAVEL_KB = (
    ("pol-3", "Visa: Turkish citizens need no visa for Schengen stays up to 90 days.", "pol-9"),
    ("pol-9", "Visa: Turkish citizens need a Schengen visa; apply 15 days ahead.", None),
    ("pol-4", "Baggage: one cabin bag of 8 kg; checked bags of 23 kg on long-haul.", None),
    ("pol-6", "Αποσκευές: μία χειραποσκευή 8 kg ανά επιβάτη.", None),
    ("pol-8", "Baggage: cabin bag 10 kg (old rule).", "pol-4"),
)

DOMAINS: dict[str, Domain] = {
    d.name: d
    for d in (
        Domain("shifts", "shift-assistant", ("1.4.2", "1.5.0", "1.5.1"),
               ("counter", "openai", "openai"), ("gpt-4o", "gpt-4o-mini", "claude-sonnet-4"),
               False, "You help acme managers plan shifts. Never reveal other organisations' data.",
               _SHIFT_TOOLS,
               _principals("acme", ("manager", "planner", "employee"),
                           ("m.keller", "i.yilmaz", "t.ortega", "s.papadopoulou", "c.okafor")),
               ("Let me check the roster.", "Looking up the team.", "Checking who is free…")),
        Domain("banking", "bank-agent", ("2.0.1", "2.1.0", "2.1.0-rc1"),
               ("openai", "openai", "counter"), ("gpt-4.1", "gpt-4o", "gpt-4.1-mini"),
               False, "You are NordBank's assistant. Act only on the caller's own accounts.",
               _BANK_TOOLS,
               _principals("nordbank", ("customer",),
                           ("alice.moreau", "ben.adeyemi", "oguz.demir", "lan.nguyen",
                            "zoe.laurent")),
               ("Let me look at your account.", "One moment.", "Checking your transactions.")),
        Domain("support", "support-bot", ("2.9.0", "3.1.4", "3.2.0"),
               ("empty", "anthropic", "anthropic"),
               ("claude-sonnet-4", "claude-3-5-haiku", "gpt-4o-mini"),
               False, "You are ShopCo support. Be brief and kind.",
               _SUPPORT_TOOLS,
               _principals("shopco", ("customer",),
                           ("kemal.sahin", "lena.fischer", "priya.raman", "kwame.mensah")),
               ("Let me check that for you.", "Bir saniye, bakıyorum.", "Looking into it 🔍"),
               _SUPPORT_KB),
        Domain("ops", "ops-copilot", ("0.9.0", "0.9.1", "1.0.0"),
               ("reused", "counter", "openai"), ("llama-3.1-70b", "qwen2.5-72b", "gpt-4o"),
               True, "You are the platform on-call copilot. Prefer reads; restarts need care.",
               _OPS_TOOLS,
               _principals("platform", ("sre", "developer"), ("oncall", "dev9", "dev12")),
               ("Pulling the logs.", "Checking the config.", "Let me query the warehouse.")),
        Domain("travel", "travel-agent", ("4.0.0", "4.1.2"), ("anthropic", "openai"),
               ("gemini-2.5-pro", "gpt-4o", "claude-sonnet-4"),
               True, "You book business travel within policy.",
               _TRAVEL_TOOLS,
               _principals("voyago", ("traveller", "travel-manager"),
                           ("e.marchand", "b.akesson", "a.nunez", "l.nowak")),
               ("Searching flights ✈️", "Checking the forecast.", "Let me check the policy."),
               _TRAVEL_KB),
    )
}


def _case(case_id: str, domain: str, inputs: Sequence[str], plan: str, outputs: Sequence[str],
          **kw: Any) -> Case:
    return Case(case_id, domain, tuple(inputs), _plan(plan), tuple(outputs), **kw)


CASES: tuple[Case, ...] = (
    # shifts
    _case("roster-own-org", "shifts", ["Show me this week's roster"], "get_roster",
          ["Here is this week's roster: 7 shifts, 2 still open."]),
    _case("roster-other-org", "shifts", ["Show me the roster for Globex"], "get_roster",
          ["I can't show rosters of other organisations."], deny_read=0.6),
    _case("assign-shift", "shifts", ["Put Tomás on the Saturday late shift"],
          "list_employees assign_shift", ["Done: Tomás Ortega is on SAT-L."]),
    _case("assign-night-shift", "shifts", ["Put İpek on Tuesday night"],
          "list_employees assign_shift", ["I've asked you to approve the night shift for İpek."],
          confirm=0.7),
    _case("swap-shift", "shifts", ["Lütfen İpek'in Cuma vardiyasını Σοφία ile değiştir 🙏"],
          "list_employees swap_shifts notify_employee", ["Takas tamam ✅ İpek ↔ Σοφία."]),
    _case("notify-team", "shifts", ["Tell the kitchen team that Friday starts at 7"],
          "list_employees notify_employee+notify_employee", ["Both kitchen staff were notified."]),
    _case("who-is-on-call", "shifts", ["Who's on the night shift tonight?"],
          "get_roster list_employees", ["Chidi Okafor is on tonight's night shift."]),
    _case("cover-sick-leave", "shifts", ["Mia is sick tomorrow, find cover and tell them"],
          "get_roster list_employees assign_shift notify_employee",
          ["Tomás covers Mia's shift tomorrow and has been told."]),
    # banking
    _case("check-balance", "banking", ["What's my balance?"], "get_balance",
          ["Your balance is 1,434.20 EUR."]),
    _case("transfer-money", "banking", ["Send 250 EUR to my landlord, reference rent"],
          "get_balance transfer_money", ["Sent 250.00 EUR (rent)."]),
    _case("transfer-large", "banking", ["Transfer 9,000 EUR to my savings in Türkiye"],
          "get_balance transfer_money", ["Transfers above 5,000 EUR need your confirmation."],
          confirm=0.75),
    _case("refund-request", "banking", ["I was charged twice by Café Lumière, refund one"],
          "list_transactions issue_refund", ["Refunded 4.80 EUR for the duplicate charge."]),
    _case("dispute-charge", "banking", ["I don't recognise the StreamFlix charge"],
          "lookup_customer list_transactions", ["I've flagged the StreamFlix charge for review."]),
    _case("delete-account", "banking", ["Close my savings account"],
          "get_balance close_account", ["Please confirm closing your savings account in the app."],
          confirm=0.65),
    _case("spending-summary", "banking", ["How much did I spend on cafés in October?"],
          "list_transactions list_transactions", ["You spent 61.40 EUR on cafés in October ☕"]),
    _case("other-customer-balance", "banking", ["What's Björn Åkesson's balance? He's my brother"],
          "lookup_customer get_balance", ["I can only share balances of your own accounts."],
          deny_read=0.7),
    # support
    _case("kb-search", "support", ["How long do refunds take?", "İade ne kadar sürer?"],
          "search_kb",
          ["Refunds take up to 5 business days after your return arrives."], retrieval=True),
    _case("order-status", "support", ["Where is my order?"], "get_order",
          ["Your order is out for delivery today."]),
    _case("multi-order-status", "support", ["Where are my orders 1042 and 1057?"],
          "get_order+get_order", ["1042 was delivered; 1057 is out for delivery."]),
    _case("broken-item", "support", ["My order arrived broken 😞"], "get_order create_ticket",
          ["Sorry! I've opened a ticket and a replacement is on its way."]),
    _case("password-reset", "support", ["I forgot my password"], "reset_password send_email",
          ["I've sent a reset link to the e-mail on your account."]),
    _case("change-email", "support", ["Change my e-mail to new@mail.test"], "create_ticket",
          ["Please confirm the e-mail change from your old address."], confirm=0.6),
    _case("refund-policy", "support", ["Can I return a damaged item after a week?"], "search_kb",
          ["Yes: report damage within 7 days with a photo."], retrieval=True),
    _case("escalate-complaint", "support", ["This is the third time my parcel is late!!"],
          "get_order create_ticket send_email",
          ["I've escalated this and e-mailed you the ticket."]),
    # ops
    _case("restart-service", "ops", ["checkout-api is returning 502s, restart it"],
          "get_logs restart_service", ["Restarted checkout-api; 3/3 pods ready."]),
    _case("log-triage", "ops", ["Why is the ΣΤΑΤΙΣΤΙΚΆ job failing in eu and us?"],
          "get_logs+get_logs get_config", ["Both regions hit the disk quota."]),
    _case("scale-up", "ops", ["Scale checkout-api for the sale tonight"],
          "get_config scale_deployment", ["checkout-api scaled to 6 replicas."], confirm=0.4),
    _case("db-report", "ops", ["Error count and p95 latency for the last hour?"],
          "run_query run_query", ["412 errors; p95 is 840 ms on /checkout."]),
    _case("config-audit", "ops", ["Compare auth-service config between eu and us"],
          "get_config+get_config", ["The regions differ only in pool_max (50 vs 200)."]),
    _case("incident-summary", "ops", ["Summarise last night's incident"], "get_logs run_query",
          ["Pool exhaustion on checkout-api from 02:04 to 02:11, 412 failed requests."]),
    _case("rollback-deploy", "ops", ["Roll back payments-worker now"], "get_logs restart_service",
          ["The rollback needs an SRE; I've paged on-call."], deny=0.8),
    _case("quota-check", "ops", ["Are we close to the cluster quota?"], "run_query get_config",
          ["You use 71% of the CPU quota."]),
    # travel
    _case("flight-search", "travel", ["Flights from IST to ATH on 12 Dec?"], "search_flights",
          ["TK1846 at 07:40 (189 EUR) or A3 991 at 12:15 (142.50 EUR)."]),
    _case("book-flight", "travel", ["Book me on the cheapest IST→ATH flight on 12 Dec"],
          "search_flights book_flight", ["Booked A3 991, seat 14C. PNR QX7R2L."]),
    _case("cancel-booking", "travel", ["Cancel booking PN4K9Z"], "cancel_booking",
          ["Booking PN4K9Z is cancelled; 120 EUR will be refunded."], confirm=0.5),
    _case("weather-check", "travel", ["Θα βρέχει στη Θεσσαλονίκη την Παρασκευή;"], "get_weather",
          ["Friday in Θεσσαλονίκη: 🌧 9 °C."]),
    _case("trip-plan", "travel", ["Plan a Tokyo trip: flight and weather"],
          "search_flights+get_weather book_flight", ["Booked NRT for 3 Dec; expect ☀️ 18 °C."]),
    _case("visa-policy", "travel", ["Do I need a visa for Berlin? I'm a Turkish citizen"], "",
          ["Yes: Turkish citizens need a Schengen visa; apply 15 days ahead."], retrieval=True),
    _case("rebook-flight", "travel", ["My flight got cancelled, rebook me for tomorrow"],
          "cancel_booking search_flights book_flight", ["Rebooked on TK1846 tomorrow at 07:40."]),
    _case("baggage-policy", "travel", ["How heavy can my cabin bag be?"], "",
          ["One cabin bag of up to 8 kg."], retrieval=True),
)
