package deny

// Error kinds of the failures on the way to a tool (Failed.Kind, the
// ledger's error_kind). The caller sees the code's status and message
// alone; the kind tells an operator which of them it was.
const (
	// KindNoResponders: no tool service is subscribed on the subject
	// (ToolUnavailable).
	KindNoResponders = "no_responders"
	// KindBusUnavailable: garmd's bus connection is away
	// (ToolUnavailable).
	KindBusUnavailable = "bus_unavailable"
	// KindBusForbidden: the bus refused to carry the call, because
	// garmd's identity may not publish on the tool's subject — its
	// permissions are not the catalogue's (ToolUnavailable). Said at
	// once; it is no slow tool.
	KindBusForbidden = "bus_forbidden"
	// KindTimeout: the tool did not answer before the call's deadline
	// (DeadlineExceeded).
	KindTimeout = "timeout"
	// KindLimitUnavailable: a hard limit's counter could not be reached
	// within its bound (LimitUnavailable).
	KindLimitUnavailable = "limit_unavailable"
)
