package redact

import toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"

// TransformString is value through onDeny's arm as Apply transforms one
// string instance for a Redactor keyed with hashKey and a caller of tenant,
// false where Apply omits. FuzzApply builds its expectations with it and
// TransformTimestamp, walking answers by name where Apply walks by number.
func TransformString(onDeny *toolv1.Redaction, hashKey []byte, tenant, value string) (string, bool) {
	a := armOf(onDeny)
	return a.transformString(value, &hashKeys{key: hashKey, tenant: tenant})
}

// TransformTimestamp is the seconds a Timestamp holds after onDeny's arm,
// its nanos then being zero, false where Apply omits.
func TransformTimestamp(onDeny *toolv1.Redaction, seconds int64, nanos int32) (int64, bool) {
	a := armOf(onDeny)
	if a.kind != armDateGrain {
		return 0, false
	}
	return dateGrain(seconds, nanos, a.grain)
}
