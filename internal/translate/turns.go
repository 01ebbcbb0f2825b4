package translate

// turnOutcome is how a turn ended, as far as the snapshot and replay care.
type turnOutcome uint8

const (
	turnRunning   turnOutcome = iota
	turnDone                  // the agent ended it (any stop reason but cancelled)
	turnCancelled             // stopReason cancelled
	turnFailed                // the agent call failed (`_gateway/turn_ended` with error, or EndTurn with a reason)
)

// turnRec is one turn. Entries point at it, so a turn's outcome, learned at its end, applies to everything it
// produced without revisiting them.
type turnRec struct {
	id      string
	outcome turnOutcome
}

// maxTurnIndex bounds the id → turn map. Entries keep their own pointer, so forgetting an old id only means a
// late `_gateway/turn_ended` for it is ignored.
const maxTurnIndex = 1024

// turnIndex finds turn records by id, forgetting the oldest ids past maxTurnIndex.
type turnIndex struct {
	byID  map[string]*turnRec
	order []string
}

func (x *turnIndex) init() { x.byID = map[string]*turnRec{} }

// get returns the record for id, creating it (running) when unknown.
func (x *turnIndex) get(id string) *turnRec {
	if t, ok := x.byID[id]; ok {
		return t
	}
	t := &turnRec{id: id}
	x.byID[id] = t
	x.order = append(x.order, id)
	if len(x.order) > maxTurnIndex {
		delete(x.byID, x.order[0])
		x.order = append(x.order[:0], x.order[1:]...)
	}
	return t
}

func (x *turnIndex) lookup(id string) *turnRec { return x.byID[id] }
