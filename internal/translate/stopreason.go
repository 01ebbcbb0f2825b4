package translate

// Stop reasons the gateway reports. end_turn and cancelled are ACP's StopReason values; error is the
// gateway's own, for a turn that failed, so a client that reads only stopReason never takes it for a success.
// `/acp` never sends error: its session/prompt answers a failed turn with a JSON-RPC error.
const (
	StopEndTurn   = "end_turn"
	StopCancelled = "cancelled"
	StopError     = "error"
)

// How a turn ended, as `_gateway/turn_ended` and the REST turn state say: the agent finished it (whatever its
// ACP stop reason), it was cancelled, or it failed (the agent's call failed, the agent died, its node was
// lost, the gateway restarted during it).
const (
	OutcomeCompleted = "completed"
	OutcomeCancelled = "cancelled"
	OutcomeFailed    = "failed"
)

// OutcomeOf is the outcome of a turn that ended with stop (a ResolveStopReason answer, or StopError).
func OutcomeOf(stop string) string {
	switch stop {
	case StopError:
		return OutcomeFailed
	case StopCancelled:
		return OutcomeCancelled
	}
	return OutcomeCompleted
}

// ResolveStopReason decides how a turn ended. Once a client asked to cancel, the turn ends `cancelled` even
// when the agent's terminal answer slipped in first (the race the reference systems document): the user
// asked to stop and must not see a turn that "finished normally" after that. Without a cancel, the agent's
// own reason stands; an empty or unknown reason is `end_turn` (a failure is content, not a protocol error).
func ResolveStopReason(agentReason string, cancelRequested bool) string {
	if cancelRequested {
		return StopCancelled
	}
	switch agentReason {
	case "end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled":
		return agentReason
	default:
		return StopEndTurn
	}
}
