package otlphttp

import (
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// The field numbers of the OTLP messages this file writes
// (opentelemetry/proto/collector/trace/v1, trace/v1, common/v1,
// resource/v1). TestTheEncodingIsTheSDKExportersMessage holds every one
// to the generated types.
const (
	requestResourceSpans = 1

	resourceSpansResource   = 1
	resourceSpansScopeSpans = 2
	resourceSpansSchemaURL  = 3

	resourceAttributes = 1

	scopeSpansScope     = 1
	scopeSpansSpans     = 2
	scopeSpansSchemaURL = 3

	scopeName       = 1
	scopeVersion    = 2
	scopeAttributes = 3

	spanTraceID                = 1
	spanSpanID                 = 2
	spanTraceState             = 3
	spanParentSpanID           = 4
	spanName                   = 5
	spanKind                   = 6
	spanStart                  = 7
	spanEnd                    = 8
	spanAttributes             = 9
	spanDroppedAttributesCount = 10
	spanEvents                 = 11
	spanDroppedEventsCount     = 12
	spanLinks                  = 13
	spanDroppedLinksCount      = 14
	spanStatus                 = 15
	spanFlags                  = 16

	eventTime                   = 1
	eventName                   = 2
	eventAttributes             = 3
	eventDroppedAttributesCount = 4

	linkTraceID                = 1
	linkSpanID                 = 2
	linkAttributes             = 4
	linkDroppedAttributesCount = 5
	linkFlags                  = 6

	statusMessage = 2
	statusCode    = 3

	keyValueKey   = 1
	keyValueValue = 2

	anyString = 1
	anyBool   = 2
	anyInt    = 3
	anyDouble = 4
	anyArray  = 5
	anyKVList = 6
	anyBytes  = 7

	arrayValues  = 1
	kvListValues = 1
)

// The span flags' bits above the W3C trace flags: whether the parent's
// remoteness is known (always, here), and whether it is remote.
const (
	flagsHasIsRemote = 0x100
	flagsIsRemote    = 0x200
)

// encoder appends OTLP protobuf to b. A nested message is opened with its
// tag and one byte reserved for its length, and closed when its length is
// known: under 128 bytes (an attribute, a value, a status) the byte is the
// length; a longer message moves right by the length's extra bytes.
type encoder struct {
	b []byte
}

func (e *encoder) open(field protowire.Number) int {
	e.b = protowire.AppendTag(e.b, field, protowire.BytesType)
	e.b = append(e.b, 0)
	return len(e.b)
}

func (e *encoder) close(start int) {
	n := len(e.b) - start
	if n < 0x80 {
		e.b[start-1] = byte(n)
		return
	}
	extra := protowire.SizeVarint(uint64(n)) - 1
	for range extra {
		e.b = append(e.b, 0)
	}
	copy(e.b[start+extra:], e.b[start:start+n])
	protowire.AppendVarint(e.b[:start-1], uint64(n))
}

func (e *encoder) string(field protowire.Number, s string) {
	if s == "" {
		return
	}
	e.b = protowire.AppendTag(e.b, field, protowire.BytesType)
	e.b = protowire.AppendString(e.b, s)
}

func (e *encoder) bytes(field protowire.Number, v []byte) {
	if len(v) == 0 {
		return
	}
	e.b = protowire.AppendTag(e.b, field, protowire.BytesType)
	e.b = protowire.AppendBytes(e.b, v)
}

func (e *encoder) uvarint(field protowire.Number, v uint64) {
	if v == 0 {
		return
	}
	e.b = protowire.AppendTag(e.b, field, protowire.VarintType)
	e.b = protowire.AppendVarint(e.b, v)
}

func (e *encoder) fixed64(field protowire.Number, v uint64) {
	if v == 0 {
		return
	}
	e.b = protowire.AppendTag(e.b, field, protowire.Fixed64Type)
	e.b = protowire.AppendFixed64(e.b, v)
}

func (e *encoder) fixed32(field protowire.Number, v uint32) {
	if v == 0 {
		return
	}
	e.b = protowire.AppendTag(e.b, field, protowire.Fixed32Type)
	e.b = protowire.AppendFixed32(e.b, v)
}

// group is the spans of one resource and instrumentation scope, as the
// request nests them.
type group struct {
	resource *resource.Resource
	key      groupKey
	spans    []sdktrace.ReadOnlySpan
}

type groupKey struct {
	resource attribute.Distinct
	scope    instrumentation.Scope
}

// batch is what one export reuses: the encoder's buffer and the groups.
type batch struct {
	encoder
	groups []group
	byKey  map[groupKey]int
}

// request encodes spans as an ExportTraceServiceRequest: a ResourceSpans
// per resource, in the order spans first name it, holding a ScopeSpans
// per instrumentation scope, each holding its spans in their order. What
// each message carries is what the SDK's OTLP exporters send.
func (bt *batch) request(spans []sdktrace.ReadOnlySpan) []byte {
	bt.b = bt.b[:0]
	bt.group(spans)
	for i := range bt.groups {
		if bt.resourceBefore(i) {
			continue // written with the first group of its resource
		}
		res := bt.groups[i].resource
		rs := bt.open(requestResourceSpans)
		if res != nil {
			r := bt.open(resourceSpansResource)
			for it := res.Iter(); it.Next(); {
				bt.keyValue(resourceAttributes, it.Attribute())
			}
			bt.close(r)
		}
		for j := i; j < len(bt.groups); j++ {
			if bt.groups[j].key.resource == bt.groups[i].key.resource {
				bt.scopeSpans(&bt.groups[j])
			}
		}
		if res != nil {
			bt.string(resourceSpansSchemaURL, res.SchemaURL())
		}
		bt.close(rs)
	}
	// The spans are written: the groups hold none of them until the next
	// batch.
	for i := range bt.groups {
		clear(bt.groups[i].spans)
		bt.groups[i].spans = bt.groups[i].spans[:0]
	}
	return bt.b
}

// group sorts spans into bt.groups by resource and scope, keeping their
// order within each.
func (bt *batch) group(spans []sdktrace.ReadOnlySpan) {
	bt.groups = bt.groups[:0]
	if bt.byKey == nil {
		bt.byKey = make(map[groupKey]int)
	}
	clear(bt.byKey)
	last := -1
	for _, s := range spans {
		if s == nil {
			continue
		}
		res := s.Resource()
		k := groupKey{scope: s.InstrumentationScope()}
		if res != nil {
			k.resource = res.Equivalent()
		}
		if last >= 0 && bt.groups[last].key == k {
			bt.groups[last].spans = append(bt.groups[last].spans, s)
			continue
		}
		g, ok := bt.byKey[k]
		if !ok {
			g = len(bt.groups)
			if g < cap(bt.groups) {
				bt.groups = bt.groups[:g+1]
				bt.groups[g].resource, bt.groups[g].key = res, k
			} else {
				bt.groups = append(bt.groups, group{resource: res, key: k})
			}
			bt.byKey[k] = g
		}
		bt.groups[g].spans = append(bt.groups[g].spans, s)
		last = g
	}
}

// resourceBefore is whether a group before group i has its resource.
func (bt *batch) resourceBefore(i int) bool {
	for j := range i {
		if bt.groups[j].key.resource == bt.groups[i].key.resource {
			return true
		}
	}
	return false
}

func (bt *batch) scopeSpans(g *group) {
	ss := bt.open(resourceSpansScopeSpans)
	scope := g.key.scope
	if scope != (instrumentation.Scope{}) {
		sc := bt.open(scopeSpansScope)
		bt.string(scopeName, scope.Name)
		bt.string(scopeVersion, scope.Version)
		for it := scope.Attributes.Iter(); it.Next(); {
			bt.keyValue(scopeAttributes, it.Attribute())
		}
		bt.close(sc)
	}
	for _, s := range g.spans {
		bt.span(s)
	}
	bt.string(scopeSpansSchemaURL, scope.SchemaURL)
	bt.close(ss)
}

func (bt *batch) span(s sdktrace.ReadOnlySpan) {
	sp := bt.open(scopeSpansSpans)
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	bt.bytes(spanTraceID, tid[:])
	bt.bytes(spanSpanID, sid[:])
	bt.string(spanTraceState, sc.TraceState().String())
	parent := s.Parent()
	if psid := parent.SpanID(); psid.IsValid() {
		bt.bytes(spanParentSpanID, psid[:])
	}
	bt.string(spanName, s.Name())
	bt.uvarint(spanKind, uint64(kind(s.SpanKind())))
	bt.fixed64(spanStart, unixNano(s.StartTime().UnixNano()))
	bt.fixed64(spanEnd, unixNano(s.EndTime().UnixNano()))
	for _, kv := range s.Attributes() {
		bt.keyValue(spanAttributes, kv)
	}
	bt.uvarint(spanDroppedAttributesCount, count(s.DroppedAttributes()))
	for _, ev := range s.Events() {
		e := bt.open(spanEvents)
		bt.fixed64(eventTime, unixNano(ev.Time.UnixNano()))
		bt.string(eventName, ev.Name)
		for _, kv := range ev.Attributes {
			bt.keyValue(eventAttributes, kv)
		}
		bt.uvarint(eventDroppedAttributesCount, count(ev.DroppedAttributeCount))
		bt.close(e)
	}
	bt.uvarint(spanDroppedEventsCount, count(s.DroppedEvents()))
	for _, l := range s.Links() {
		lk := bt.open(spanLinks)
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		bt.bytes(linkTraceID, ltid[:])
		bt.bytes(linkSpanID, lsid[:])
		for _, kv := range l.Attributes {
			bt.keyValue(linkAttributes, kv)
		}
		bt.uvarint(linkDroppedAttributesCount, count(l.DroppedAttributeCount))
		bt.fixed32(linkFlags, flags(l.SpanContext.TraceFlags(), l.SpanContext))
		bt.close(lk)
	}
	bt.uvarint(spanDroppedLinksCount, count(s.DroppedLinks()))
	// A span always has a status, if only an unset one.
	st := bt.open(spanStatus)
	status := s.Status()
	bt.string(statusMessage, status.Description)
	bt.uvarint(statusCode, uint64(statusCodeOf(status.Code)))
	bt.close(st)
	bt.fixed32(spanFlags, flags(sc.TraceFlags(), parent))
	bt.close(sp)
}

// keyValue writes one attribute as a KeyValue in field.
func (e *encoder) keyValue(field protowire.Number, kv attribute.KeyValue) {
	m := e.open(field)
	e.string(keyValueKey, string(kv.Key))
	v := e.open(keyValueValue)
	e.value(kv.Value)
	e.close(v)
	e.close(m)
}

// value writes the fields of an AnyValue. A value's one field is written
// even when it is its type's zero: it says which type the value has.
func (e *encoder) value(v attribute.Value) {
	switch v.Type() {
	case attribute.BOOL:
		e.anyBool(v.AsBool())
	case attribute.INT64:
		e.anyInt(v.AsInt64())
	case attribute.FLOAT64:
		e.anyDouble(v.AsFloat64())
	case attribute.STRING:
		e.anyString(v.AsString())
	case attribute.BYTESLICE:
		e.b = protowire.AppendTag(e.b, anyBytes, protowire.BytesType)
		e.b = protowire.AppendBytes(e.b, v.AsByteSlice())
	case attribute.BOOLSLICE:
		array(e, v.AsBoolSlice(), (*encoder).anyBool)
	case attribute.INT64SLICE:
		array(e, v.AsInt64Slice(), (*encoder).anyInt)
	case attribute.FLOAT64SLICE:
		array(e, v.AsFloat64Slice(), (*encoder).anyDouble)
	case attribute.STRINGSLICE:
		array(e, v.AsStringSlice(), (*encoder).anyString)
	case attribute.SLICE:
		array(e, v.AsSlice(), (*encoder).value)
	case attribute.MAP:
		m := e.open(anyKVList)
		for _, kv := range v.AsMap() {
			e.keyValue(kvListValues, kv)
		}
		e.close(m)
	case attribute.EMPTY:
	default:
		e.anyString("INVALID")
	}
}

// array writes xs as an ArrayValue, each element an AnyValue put writes.
func array[T any](e *encoder, xs []T, put func(*encoder, T)) {
	a := e.open(anyArray)
	for _, x := range xs {
		el := e.open(arrayValues)
		put(e, x)
		e.close(el)
	}
	e.close(a)
}

func (e *encoder) anyBool(x bool) {
	e.b = protowire.AppendTag(e.b, anyBool, protowire.VarintType)
	e.b = protowire.AppendVarint(e.b, protowire.EncodeBool(x))
}

func (e *encoder) anyInt(x int64) {
	e.b = protowire.AppendTag(e.b, anyInt, protowire.VarintType)
	e.b = protowire.AppendVarint(e.b, uint64(x))
}

func (e *encoder) anyDouble(x float64) {
	e.b = protowire.AppendTag(e.b, anyDouble, protowire.Fixed64Type)
	e.b = protowire.AppendFixed64(e.b, math.Float64bits(x))
}

func (e *encoder) anyString(x string) {
	e.b = protowire.AppendTag(e.b, anyString, protowire.BytesType)
	e.b = protowire.AppendString(e.b, x)
}

// kind is OTLP's SpanKind for the SDK's: the same numbers, and
// unspecified for anything else.
func kind(k trace.SpanKind) int {
	switch k {
	case trace.SpanKindInternal, trace.SpanKindServer, trace.SpanKindClient, trace.SpanKindProducer, trace.SpanKindConsumer:
		return int(k)
	}
	return 0
}

func statusCodeOf(c codes.Code) int {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

// flags are the W3C trace flags with the bit saying the parent's
// remoteness is known and, when it is remote, the bit saying so.
func flags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	f := uint32(tf) | flagsHasIsRemote
	if parent.IsRemote() {
		f |= flagsIsRemote
	}
	return f
}

func unixNano(n int64) uint64 { return uint64(max(0, n)) }

func count(n int) uint64 {
	if n <= 0 {
		return 0
	}
	return uint64(min(int64(n), math.MaxUint32))
}
