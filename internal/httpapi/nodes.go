package httpapi

import "net/http"

// listNodes lists the gateway nodes (GET /v1/nodes): every live node of the cluster in mode c, else this one.
// Any principal may read it: node ids, URLs and agent names are what a client needs to pick where a session
// runs, and no session of anyone is in it.
func (s *Server) listNodes(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]any{"nodes": s.Registry.Nodes()})
	return nil
}
