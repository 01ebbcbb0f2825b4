// Package originpolicy decides which Host names and browser Origins the gateway serves (against DNS
// rebinding and cross-site requests); httpapi's router answers the requests it refuses.
package originpolicy
