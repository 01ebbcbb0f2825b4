package translate

// Stop reasons the gateway reports. They are ACP's StopReason values.
const (
	StopEndTurn   = "end_turn"
	StopCancelled = "cancelled"
)

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
