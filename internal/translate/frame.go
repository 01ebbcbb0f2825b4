package translate

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/acp-gateway/gateway/internal/translate/rawjson"
)

// GatewayMeta is what the gateway stamps into `params._meta.gateway` of every frame it logs. Zero fields are
// left out, so a gateway notification that belongs to no turn carries no turnId.
type GatewayMeta struct {
	Seq          uint64
	Epoch        string
	TurnID       string
	PermissionID string
	Deadline     string // RFC 3339; permission requests only
	Truncated    bool   // a field of this frame was cut to the payload bound
	// Resent marks a pending permission request sent again after a replay: it keeps its original (older) seq,
	// so clients must not move their cursor on it.
	Resent bool
}

// appendJSON appends b as its own JSON encoding. Plain ASCII strings without specials, which is what ids,
// epochs and method names are, take the fast path.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			b, _ := json.Marshal(s)
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

func (m GatewayMeta) appendTo(dst []byte) []byte {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendUint(dst, m.Seq, 10)
	if m.Epoch != "" {
		dst = append(dst, `,"epoch":`...)
		dst = appendString(dst, m.Epoch)
	}
	if m.TurnID != "" {
		dst = append(dst, `,"turnId":`...)
		dst = appendString(dst, m.TurnID)
	}
	if m.PermissionID != "" {
		dst = append(dst, `,"permissionId":`...)
		dst = appendString(dst, m.PermissionID)
	}
	if m.Deadline != "" {
		dst = append(dst, `,"deadline":`...)
		dst = appendString(dst, m.Deadline)
	}
	if m.Truncated {
		dst = append(dst, `,"truncated":true`...)
	}
	if m.Resent {
		dst = append(dst, `,"resent":true`...)
	}
	return append(dst, '}')
}

// AppendNotification appends a JSON-RPC notification `{"jsonrpc":"2.0","method":…,"params":…}` whose params
// carry `_meta.gateway`. params must be a JSON object; the agent's own members, including its own `_meta`
// keys, are copied byte for byte and in wire order, except invalid UTF-8 (rawjson.ValidUTF8): the log only
// holds frames a browser can read.
func AppendNotification(dst []byte, method string, params []byte, m GatewayMeta) ([]byte, error) {
	params = rawjson.ValidUTF8(params)
	// One allocation at most: frames are kept in the log, so growing by doubling would leave garbage behind.
	dst = slices.Grow(dst, len(`{"jsonrpc":"2.0","method":"","params":}`)+len(method)+len(params)+m.maxStampLen())
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst = appendString(dst, method)
	dst = append(dst, `,"params":`...)
	dst, err := appendStampedParams(dst, params, m)
	if err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

// AppendRequest appends a JSON-RPC request with a string id (a gateway permission id).
func AppendRequest(dst []byte, id, method string, params []byte, m GatewayMeta) ([]byte, error) {
	params = rawjson.ValidUTF8(params)
	dst = slices.Grow(dst, len(`{"jsonrpc":"2.0","id":"","method":"","params":}`)+len(id)+len(method)+len(params)+m.maxStampLen())
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendString(dst, id)
	dst = append(dst, `,"method":`...)
	dst = appendString(dst, method)
	dst = append(dst, `,"params":`...)
	dst, err := appendStampedParams(dst, params, m)
	if err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

// appendStampedParams copies the params object and merges `gateway` into its `_meta` (creating `_meta` at the
// end when absent). A `gateway` key the agent put in its own `_meta` is replaced: clients must be able to
// trust `_meta.gateway`.
func appendStampedParams(dst []byte, params []byte, m GatewayMeta) ([]byte, error) {
	start := len(dst)
	dst = append(dst, '{')
	first, sawMeta := true, false
	var badMeta bool
	err := rawjson.EachMember(params, func(mem rawjson.Member) bool {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		if string(mem.Key(params)) != "_meta" {
			dst = append(dst, params[mem.KeyStart:mem.ValEnd]...)
			return true
		}
		sawMeta = true
		dst = append(dst, `"_meta":{`...)
		meta := mem.Value(params)
		innerFirst := true
		if len(meta) > 0 && meta[0] == '{' {
			if e := rawjson.EachMember(meta, func(mm rawjson.Member) bool {
				if string(mm.Key(meta)) == "gateway" {
					return true
				}
				if !innerFirst {
					dst = append(dst, ',')
				}
				innerFirst = false
				dst = append(dst, meta[mm.KeyStart:mm.ValEnd]...)
				return true
			}); e != nil {
				badMeta = true
				return false
			}
		}
		if !innerFirst {
			dst = append(dst, ',')
		}
		dst = append(dst, `"gateway":`...)
		dst = m.appendTo(dst)
		dst = append(dst, '}')
		return true
	})
	if err != nil || badMeta {
		return dst[:start], rawjson.ErrNotObject
	}
	if !sawMeta {
		if !first {
			dst = append(dst, ',')
		}
		dst = append(dst, `"_meta":{"gateway":`...)
		dst = m.appendTo(dst)
		dst = append(dst, '}')
	}
	return append(dst, '}'), nil
}

// RewriteSessionID returns params with its top-level `sessionId` replaced by id (the gateway's session id),
// everything else byte for byte. Agents' ids never reach web clients, and clients' never reach agents.
func RewriteSessionID(dst []byte, params []byte, id string) ([]byte, error) {
	start := len(dst)
	dst = append(dst, '{')
	first := true
	err := rawjson.EachMember(params, func(mem rawjson.Member) bool {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		if string(mem.Key(params)) == "sessionId" {
			dst = append(dst, `"sessionId":`...)
			dst = appendString(dst, id)
			return true
		}
		dst = append(dst, params[mem.KeyStart:mem.ValEnd]...)
		return true
	})
	if err != nil {
		return dst[:start], err
	}
	return append(dst, '}'), nil
}
