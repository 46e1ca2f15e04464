package annotations_test

// specNumbers is transcribed by hand from the spec, not from the .proto files.
// A line is one of:
//
//	<field or enum value> <number>
//	<extension> <number> extends <extended options message>
//	<message or enum> reserved <n or lo-hi>...
//	<message> empty
//
// Enum values are named inside their enum (garm.tool.v1.Clearance.CLEARANCE_PUBLIC)
// rather than beside it as protobuf scopes them, so the table reads by type.
const specNumbers = `
# §3.1 garm.tool.v1, tool.proto
garm.tool.v1.field_policy          50001 extends google.protobuf.FieldOptions
garm.tool.v1.tool                  50002 extends google.protobuf.MethodOptions
garm.tool.v1.default_field_policy  50003 extends google.protobuf.MessageOptions
garm.tool.v1.compartments          50004 extends google.protobuf.FileOptions
garm.tool.v1.tool_sets             50005 extends google.protobuf.FileOptions
garm.tool.v1.attributes            50006 extends google.protobuf.FileOptions

garm.tool.v1.Clearance.CLEARANCE_UNSPECIFIED   0
garm.tool.v1.Clearance.CLEARANCE_PUBLIC       10
garm.tool.v1.Clearance.CLEARANCE_INTERNAL     20
garm.tool.v1.Clearance.CLEARANCE_CONFIDENTIAL 30
garm.tool.v1.Clearance.CLEARANCE_RESTRICTED   40
garm.tool.v1.Verb.VERB_UNSPECIFIED 0
garm.tool.v1.Verb.VERB_READ        1
garm.tool.v1.Verb.VERB_WRITE       2
garm.tool.v1.Verb.VERB_DESTRUCTIVE 3
garm.tool.v1.PrincipalKind.PRINCIPAL_KIND_UNSPECIFIED 0
garm.tool.v1.PrincipalKind.PRINCIPAL_KIND_USER        1
garm.tool.v1.PrincipalKind.PRINCIPAL_KIND_AGENT       2
garm.tool.v1.PrincipalKind.PRINCIPAL_KIND_SERVICE     3
garm.tool.v1.Audience.AUDIENCE_UNSPECIFIED 0
garm.tool.v1.Audience.AUDIENCE_AGENT       1
garm.tool.v1.Audience.AUDIENCE_PERSON      2
garm.tool.v1.Audience.AUDIENCE_RUNNER      3
garm.tool.v1.Reversibility.REVERSIBILITY_UNSPECIFIED 0
garm.tool.v1.Reversibility.REVERSIBILITY_NONE        1
garm.tool.v1.Reversibility.REVERSIBILITY_COMPENSABLE 2
garm.tool.v1.Reversibility.REVERSIBILITY_FULL        3
garm.tool.v1.Grain.GRAIN_UNSPECIFIED 0
garm.tool.v1.Grain.GRAIN_DAY         1
garm.tool.v1.Grain.GRAIN_MONTH       2
garm.tool.v1.Grain.GRAIN_YEAR        3
garm.tool.v1.Source.SOURCE_UNSPECIFIED 0
garm.tool.v1.Source.SOURCE_RUNNER      1

garm.tool.v1.FieldPolicy.read          1
garm.tool.v1.FieldPolicy.write         2
garm.tool.v1.FieldPolicy.compartments  3
garm.tool.v1.FieldPolicy.on_deny       4
garm.tool.v1.FieldPolicy.audit_on_read 5
garm.tool.v1.FieldPolicy.source        6

garm.tool.v1.Redaction reserved 15
garm.tool.v1.Redaction.omit            1
garm.tool.v1.Redaction.mask            2
garm.tool.v1.Redaction.hash            3
garm.tool.v1.Redaction.email_domain    4
garm.tool.v1.Redaction.keep_last       5
garm.tool.v1.Redaction.truncate        6
garm.tool.v1.Redaction.card_bin_last4  7
garm.tool.v1.Redaction.ip_prefix       8
garm.tool.v1.Redaction.url_origin      9
garm.tool.v1.Redaction.date_grain     10
garm.tool.v1.Redaction.Omit empty
garm.tool.v1.Redaction.Mask.with 1
garm.tool.v1.Redaction.Hash.per_tenant_salt 1
garm.tool.v1.Redaction.EmailDomain empty
garm.tool.v1.Redaction.KeepLast.n      1
garm.tool.v1.Redaction.KeepLast.runes  2
garm.tool.v1.Redaction.KeepLast.reason 3
garm.tool.v1.Redaction.Truncate.n      1
garm.tool.v1.Redaction.Truncate.runes  2
garm.tool.v1.Redaction.Truncate.reason 3
garm.tool.v1.Redaction.CardBinLast4 empty
garm.tool.v1.Redaction.IpPrefix.bits 1
garm.tool.v1.Redaction.UrlOrigin empty
garm.tool.v1.Redaction.DateGrain.grain 1

garm.tool.v1.ToolPolicy reserved 15
garm.tool.v1.ToolPolicy.name           1
garm.tool.v1.ToolPolicy.title          2
garm.tool.v1.ToolPolicy.description    3
garm.tool.v1.ToolPolicy.verb           4
garm.tool.v1.ToolPolicy.min_clearance  5
garm.tool.v1.ToolPolicy.compartments   6
garm.tool.v1.ToolPolicy.exclude        7
garm.tool.v1.ToolPolicy.effects        8
garm.tool.v1.ToolPolicy.approval       9
garm.tool.v1.ToolPolicy.guidance      10
garm.tool.v1.ToolPolicy.sets          12
garm.tool.v1.ToolPolicy.audit         13
garm.tool.v1.ToolPolicy.audience      14
garm.tool.v1.ToolPolicy.instance      11
garm.tool.v1.ToolPolicy.limits        16
garm.tool.v1.ToolPolicy.Effects.idempotent        1
garm.tool.v1.ToolPolicy.Effects.reversibility     2
garm.tool.v1.ToolPolicy.Effects.external          3
garm.tool.v1.ToolPolicy.Effects.compensating_tool 4
garm.tool.v1.ToolPolicy.Approval.mode                   1
garm.tool.v1.ToolPolicy.Approval.approver_min_clearance 2
garm.tool.v1.ToolPolicy.Approval.approver_compartments  3
garm.tool.v1.ToolPolicy.Approval.max_grant_age_seconds  4
garm.tool.v1.ToolPolicy.Approval.notes                  5
garm.tool.v1.ToolPolicy.Approval.material_fields        6
garm.tool.v1.ToolPolicy.Approval.distinct_approver      7
garm.tool.v1.ToolPolicy.Approval.Mode.MODE_UNSPECIFIED 0
garm.tool.v1.ToolPolicy.Approval.Mode.MODE_NONE        1
garm.tool.v1.ToolPolicy.Approval.Mode.MODE_NOTIFY      2
garm.tool.v1.ToolPolicy.Approval.Mode.MODE_GRANT       3
garm.tool.v1.ToolPolicy.Guidance.when_to_use     1
garm.tool.v1.ToolPolicy.Guidance.when_not_to_use 2
garm.tool.v1.ToolPolicy.Guidance.examples        3
garm.tool.v1.ToolPolicy.Guidance.on_error        4
garm.tool.v1.ToolPolicy.Guidance.Example.description  1
garm.tool.v1.ToolPolicy.Guidance.Example.request_json 2
garm.tool.v1.ToolPolicy.Audit reserved 2 3
garm.tool.v1.ToolPolicy.Audit.level       1
garm.tool.v1.ToolPolicy.Audit.retain_days 4
garm.tool.v1.ToolPolicy.Audit.fail_closed 5
garm.tool.v1.ToolPolicy.Audit.Level.LEVEL_UNSPECIFIED 0
garm.tool.v1.ToolPolicy.Audit.Level.LEVEL_LEDGER      1
garm.tool.v1.ToolPolicy.Audit.Level.LEVEL_AUDIT       2

garm.tool.v1.Decl.name        1
garm.tool.v1.Decl.description 2
garm.tool.v1.DeclSet.declared 1

# Limits (issue 34): ToolPolicy.limits, the catalogue's effective limits
garm.tool.v1.Limit.id          1
garm.tool.v1.Limit.description 2
garm.tool.v1.Limit.key         3
garm.tool.v1.Limit.rate        4
garm.tool.v1.Limit.concurrency 5
garm.tool.v1.Limit.cost        6
garm.tool.v1.Limit.soft        7
garm.tool.v1.Limit.KeyPart.KEY_PART_UNSPECIFIED 0
garm.tool.v1.Limit.KeyPart.KEY_PART_TENANT      1
garm.tool.v1.Limit.KeyPart.KEY_PART_SUBJECT     2
garm.tool.v1.Limit.KeyPart.KEY_PART_AGENT       3
garm.tool.v1.Limit.KeyPart.KEY_PART_TOOL        4
garm.tool.v1.Limit.Window.WINDOW_UNSPECIFIED 0
garm.tool.v1.Limit.Window.WINDOW_SECOND      1
garm.tool.v1.Limit.Window.WINDOW_MINUTE      2
garm.tool.v1.Limit.Window.WINDOW_HOUR        3
garm.tool.v1.Limit.Window.WINDOW_DAY         4
garm.tool.v1.Limit.Rate.count  1
garm.tool.v1.Limit.Rate.window 2
garm.tool.v1.Limit.Concurrency.in_flight 1
garm.plan.v1.LimitOrigin.LIMIT_ORIGIN_UNSPECIFIED 0
garm.plan.v1.LimitOrigin.LIMIT_ORIGIN_CONTRACT    1
garm.plan.v1.LimitOrigin.LIMIT_ORIGIN_TIGHTENED   2
garm.plan.v1.LimitOrigin.LIMIT_ORIGIN_DEPLOYMENT  3
garm.plan.v1.LimitPlan.tool     1
garm.plan.v1.LimitPlan.limit    2
garm.plan.v1.LimitPlan.origin   3
garm.plan.v1.LimitPlan.contract 4

# Instance authorization (issue 31): attributes and ToolPolicy.instance
garm.tool.v1.Attribute.name        1
garm.tool.v1.Attribute.description 2
garm.tool.v1.Attribute.type        3
garm.tool.v1.Attribute.max_items   4
garm.tool.v1.Attribute.max_len     5
garm.tool.v1.Attribute.Type.TYPE_UNSPECIFIED 0
garm.tool.v1.Attribute.Type.TYPE_STRING      1
garm.tool.v1.Attribute.Type.TYPE_INT         2
garm.tool.v1.Attribute.Type.TYPE_BOOL        3
garm.tool.v1.Attribute.Type.TYPE_STRING_LIST 4
garm.tool.v1.AttributeSet.declared 1
garm.tool.v1.InstanceRule.id          1
garm.tool.v1.InstanceRule.description 2
garm.tool.v1.InstanceRule.expression  3
garm.tool.v1.InstanceRule.audit_only  4
garm.tool.v1.RowFilter.id               1
garm.tool.v1.RowFilter.description      2
garm.tool.v1.RowFilter.field            3
garm.tool.v1.RowFilter.keep             4
garm.tool.v1.RowFilter.clear_on_removal 5
garm.tool.v1.RowFilter.audit_only       6
garm.tool.v1.InstancePolicy.require 1
garm.tool.v1.InstancePolicy.reveal  2
garm.tool.v1.InstancePolicy.filter  3

# §3.3 garm.tool.v1, invocation.proto
garm.tool.v1.InvocationContext.attribution      1
garm.tool.v1.InvocationContext.principal        2
garm.tool.v1.InvocationContext.act              3
garm.tool.v1.InvocationContext.scopes           4
garm.tool.v1.InvocationContext.traceparent      5
garm.tool.v1.InvocationContext.tracestate       6
garm.tool.v1.InvocationContext.deadline         7
garm.tool.v1.InvocationContext.call_id          8
garm.tool.v1.InvocationContext.idempotency_key  9
garm.tool.v1.InvocationContext.contract_version 10
garm.tool.v1.InvocationContext.grant_jti        11
garm.tool.v1.InvocationContext.agent            12
garm.tool.v1.CallContext.tenant         1
garm.tool.v1.CallContext.app            2
garm.tool.v1.CallContext.run_id         3
garm.tool.v1.CallContext.correlation_id 4
garm.tool.v1.CallContext.causation_id   5
garm.tool.v1.CallContext.budget_id      6
garm.tool.v1.CallContext.tags           7
garm.tool.v1.CallContext.feature        8
garm.tool.v1.InvocationPrincipal.subject 1
garm.tool.v1.InvocationPrincipal.kind    2
garm.tool.v1.Act.subject 1
garm.tool.v1.Act.kind    2

# §3.4 garm.card.v1
garm.card.v1.Kind.KIND_UNSPECIFIED  0
garm.card.v1.Kind.KIND_START        1
garm.card.v1.Kind.KIND_RECORD       2
garm.card.v1.Kind.KIND_LIST         3
garm.card.v1.Kind.KIND_FORM         4
garm.card.v1.Kind.KIND_CONFIRMATION 5
garm.card.v1.Kind.KIND_RESULT       6
garm.card.v1.State.STATE_UNSPECIFIED 0
garm.card.v1.State.STATE_OPEN        1
garm.card.v1.State.STATE_PENDING     2
garm.card.v1.State.STATE_DONE        3
garm.card.v1.State.STATE_FAILED      4
garm.card.v1.State.STATE_CANCELLED   5
garm.card.v1.Emphasis.EMPHASIS_UNSPECIFIED 0
garm.card.v1.Emphasis.EMPHASIS_STRONG      1
garm.card.v1.Emphasis.EMPHASIS_SUBTLE      2
garm.card.v1.Emphasis.EMPHASIS_WARNING     3
garm.card.v1.Style.STYLE_UNSPECIFIED 0
garm.card.v1.Style.STYLE_PRIMARY     1
garm.card.v1.Style.STYLE_SECONDARY   2
garm.card.v1.Style.STYLE_DESTRUCTIVE 3

garm.card.v1.Label.clearance    1
garm.card.v1.Label.compartments 2
garm.card.v1.Card.kind              1
garm.card.v1.Card.subject_id        2
garm.card.v1.Card.title             3
garm.card.v1.Card.state             4
garm.card.v1.Card.body              5
garm.card.v1.Card.actions           6
garm.card.v1.Card.disclosure        7
garm.card.v1.Card.refs              8
garm.card.v1.Card.catalogue_digest  9
garm.card.v1.Card.access           10
garm.card.v1.Element.text     1
garm.card.v1.Element.facts    2
garm.card.v1.Element.divider  3
garm.card.v1.Element.input    4
garm.card.v1.Element.section  5
garm.card.v1.Element.access  10
garm.card.v1.Section.title    1
garm.card.v1.Section.elements 2
garm.card.v1.Text.text     1
garm.card.v1.Text.emphasis 2
garm.card.v1.FactSet.facts 1
garm.card.v1.Fact.label  1
garm.card.v1.Fact.value  2
garm.card.v1.Fact.field  3
garm.card.v1.Fact.access 4
garm.card.v1.Divider empty
garm.card.v1.Input.id       1
garm.card.v1.Input.label    2
garm.card.v1.Input.required 3
garm.card.v1.Input.text     4
garm.card.v1.Input.number   5
garm.card.v1.Input.date     6
garm.card.v1.Input.toggle   7
garm.card.v1.Input.choice   8
garm.card.v1.TextInput.placeholder 1
garm.card.v1.TextInput.multiline   2
garm.card.v1.NumberInput.min 1
garm.card.v1.NumberInput.max 2
garm.card.v1.DateInput empty
garm.card.v1.ToggleInput empty
garm.card.v1.ChoiceInput.choices 1
garm.card.v1.ChoiceInput.multi   3
garm.card.v1.Choice.title  1
garm.card.v1.Choice.value  2
garm.card.v1.Choice.access 3
garm.card.v1.Action.id    1
garm.card.v1.Action.label 2
garm.card.v1.Action.style 3
garm.card.v1.Disclosure.withheld_fields 1
garm.card.v1.CardRef.kind       1
garm.card.v1.CardRef.subject_id 2
garm.card.v1.CardRef.title      3
garm.card.v1.CardRef.state      4
garm.card.v1.CardRef.tool_fqn   5

# §3.5 garm.plan.v1
garm.plan.v1.Container.CONTAINER_UNSPECIFIED      0
garm.plan.v1.Container.CONTAINER_LEAF             1
garm.plan.v1.Container.CONTAINER_MESSAGE          2
garm.plan.v1.Container.CONTAINER_LIST_OF_MESSAGES 3
garm.plan.v1.Container.CONTAINER_MAP_OF_MESSAGES  4
garm.plan.v1.MessagePlan.message 1
garm.plan.v1.MessagePlan.schema  2
garm.plan.v1.MessagePlan.rules   3
garm.plan.v1.FieldRule.path            1
garm.plan.v1.FieldRule.numbers         2
garm.plan.v1.FieldRule.read            3
garm.plan.v1.FieldRule.write           4
garm.plan.v1.FieldRule.compartments    5
garm.plan.v1.FieldRule.on_deny         6
garm.plan.v1.FieldRule.audit_on_read   7
garm.plan.v1.FieldRule.runner_sourced  8
garm.plan.v1.FieldRule.container       9
garm.plan.v1.FieldRule.schema         10
garm.plan.v1.FieldRule.required       11
garm.plan.v1.PackagePlan.package  1
garm.plan.v1.PackagePlan.messages 2
garm.plan.v1.PackagePlan.rules    3
garm.plan.v1.RulePhase.RULE_PHASE_UNSPECIFIED 0
garm.plan.v1.RulePhase.RULE_PHASE_REQUIRE     1
garm.plan.v1.RulePhase.RULE_PHASE_REVEAL      2
garm.plan.v1.RulePhase.RULE_PHASE_FILTER      3
garm.plan.v1.RulePlan.tool       1
garm.plan.v1.RulePlan.id         2
garm.plan.v1.RulePlan.phase      3
garm.plan.v1.RulePlan.reads      4
garm.plan.v1.RulePlan.cost_bound 5
garm.plan.v1.RulePlan.audit_only 6

# §3.6 garm.catalogue.v1
garm.catalogue.v1.Catalogue.annotation_schema_version 1
garm.catalogue.v1.Catalogue.files                     2
garm.catalogue.v1.Catalogue.compartments              3
garm.catalogue.v1.Catalogue.tool_sets                 4
garm.catalogue.v1.Catalogue.provenance                5
garm.catalogue.v1.Catalogue.field_docs                6
garm.catalogue.v1.Catalogue.descriptor_hashes         7
garm.catalogue.v1.Catalogue.plans                     8
garm.catalogue.v1.Catalogue.attributes                9
garm.catalogue.v1.Catalogue.limits                    10
garm.catalogue.v1.Provenance.producer 1
garm.catalogue.v1.Provenance.compiler 2
garm.catalogue.v1.Provenance.built_at 3
garm.catalogue.v1.Provenance.source   4

# §3.7 garm.ledger.v1
garm.ledger.v1.Event reserved 20-32 34-41 50-59
garm.ledger.v1.Event.event_id                1
garm.ledger.v1.Event.time                    2
garm.ledger.v1.Event.tenant                 10
garm.ledger.v1.Event.app                    11
garm.ledger.v1.Event.feature                12
garm.ledger.v1.Event.run_id                 13
garm.ledger.v1.Event.correlation_id         14
garm.ledger.v1.Event.causation_id           15
garm.ledger.v1.Event.budget_id              16
garm.ledger.v1.Event.tags                   17
garm.ledger.v1.Event.latency_ms             33
garm.ledger.v1.Event.outcome                42
garm.ledger.v1.Event.error_kind             43
garm.ledger.v1.Event.tool                   60
garm.ledger.v1.Event.principal_subject      61
garm.ledger.v1.Event.principal_actor        62
garm.ledger.v1.Event.principal_kind         63
garm.ledger.v1.Event.chain_depth            64
garm.ledger.v1.Event.clearance_effective    65
garm.ledger.v1.Event.compartments_effective 66
garm.ledger.v1.Event.redaction_plan         67
garm.ledger.v1.Event.redaction_count        68
garm.ledger.v1.Event.disclosed_count        69
garm.ledger.v1.Event.error_detail           70
garm.ledger.v1.Event.execution_subject      71
garm.ledger.v1.Event.catalogue_digest       72
garm.ledger.v1.Event.daemon_version         73
garm.ledger.v1.Event.method                 74
garm.ledger.v1.Event.surface                75
garm.ledger.v1.Event.client_name            76
garm.ledger.v1.Event.instance_rule          77
garm.ledger.v1.Event.rows_filtered          78
garm.ledger.v1.Event.filters_applied        79
garm.ledger.v1.Event.audit_only_verdicts    80
garm.ledger.v1.Event.rule_error_class       81
garm.ledger.v1.Event.limit_id               82
garm.ledger.v1.Event.limit_key              83
garm.ledger.v1.Batch.events 1
`
