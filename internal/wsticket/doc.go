// Package wsticket keeps the single-use tickets a browser opens a WebSocket or an event stream with (it
// cannot set an Authorization header there): the Store interface a cluster shares, and the in-memory default.
package wsticket
