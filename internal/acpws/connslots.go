package acpws

import (
	"net/http"
	"sync"

	"github.com/acp-gateway/gateway/internal/frameout"
	"github.com/acp-gateway/gateway/internal/principal"
)

// connSlots bounds the open /acp connections of both transports: all of them (Options.MaxConns) and those of
// one principal of role user (Options.MaxConnsPerUser), so one user cannot take every slot from the others.
type connSlots struct {
	max, perUser int // Static after construction; perUser 0 = no per-user bound.

	mu     sync.Mutex
	open   int            // Guarded by mu.
	byUser map[string]int // Guarded by mu; open connections of each user counted.
}

func newConnSlots(max, perUser int) *connSlots {
	return &connSlots{max: max, perUser: perUser, byUser: map[string]int{}}
}

// acquire takes a slot for who, or answers the refusal on w and returns nil: 503 too_many_connections at the
// gateway's cap, 429 too_many_user_connections at the user's. The release func gives the slot back once.
func (s *connSlots) acquire(w http.ResponseWriter, who principal.Principal) (release func()) {
	counted := s.perUser > 0 && !who.IsZero() && !who.IsAdmin()
	s.mu.Lock()
	switch {
	case counted && s.byUser[who.ID] >= s.perUser:
		s.mu.Unlock()
		frameout.WriteRetryProblem(w, http.StatusTooManyRequests, "too_many_user_connections", "you hold as many /acp connections as one user may (--max-acp-conns-per-user): close one first", 5)
		return nil
	case s.open >= s.max:
		s.mu.Unlock()
		frameout.WriteRetryProblem(w, http.StatusServiceUnavailable, "too_many_connections", "the gateway is at its /acp connection limit", 5)
		return nil
	}
	s.open++
	if counted {
		s.byUser[who.ID]++
	}
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.open--
			if counted {
				if s.byUser[who.ID]--; s.byUser[who.ID] == 0 {
					delete(s.byUser, who.ID)
				}
			}
		})
	}
}
