package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	contractdoc "github.com/acp-gateway/gateway"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/helpers"
)

// contractTransport checks every REST response the e2e tests receive against openapi.yaml: status, content type,
// headers and body. A response the contract does not describe becomes the request's error, so the test that made
// it fails with the validator's message. TestMain installs it on http.DefaultClient, which every REST helper,
// http.Get/Post and websocket.Dial (upgrade refusals) use.
type contractTransport struct {
	next http.RoundTripper // Static after construction.
}

// contract is openapi.yaml's validator, built once. The validator caches compiled schemas, so calls are
// serialised by contractMu (validation is CPU only: no I/O happens under it).
var (
	contract = sync.OnceValues(func() (validator.Validator, error) {
		doc, err := libopenapi.NewDocument(contractdoc.OpenAPI)
		if err != nil {
			return nil, err
		}
		v, errs := validator.NewValidator(doc)
		if len(errs) > 0 {
			return nil, fmt.Errorf("openapi.yaml: %v", errs)
		}
		return v, nil
	})
	contractMu sync.Mutex
)

func (c contractTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if err := checkContract(req, resp); err != nil {
		resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

// checkContract validates resp against its request. Streams (a switched protocol, SSE) are checked by status,
// headers and content type only: their bodies are left to the caller untouched. Other bodies are read here and
// put back.
func checkContract(req *http.Request, resp *http.Response) error {
	if outsideContract(req) {
		return nil
	}
	v, err := contract()
	if err != nil {
		return err
	}
	checked := *resp
	streaming := resp.StatusCode == http.StatusSwitchingProtocols ||
		strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	if streaming {
		checked.Body = http.NoBody
	} else {
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("%s %s: reading the response: %w", req.Method, req.URL.Path, err)
		}
		resp.Body = io.NopCloser(bytes.NewReader(data))
		checked.Body = io.NopCloser(bytes.NewReader(data))
	}
	contractMu.Lock()
	ok, errs := v.ValidateHttpResponse(req, &checked)
	contractMu.Unlock()
	if ok {
		return nil
	}
	if undescribedRoute(errs) {
		return checkUndescribed(req, resp)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s answered %d (%s), which openapi.yaml does not allow:", req.Method, req.URL.Path, resp.StatusCode, resp.Header.Get("Content-Type"))
	for _, e := range errs {
		fmt.Fprintf(&b, "\n  - %s: %s", e.Message, e.Reason)
		for _, se := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "\n      %s: %s", se.FieldPath, se.Reason)
		}
	}
	return fmt.Errorf("%s", b.String())
}

// undescribedRoute is true when the request's path or method is not in the contract at all.
func undescribedRoute(errs []*liberrors.ValidationError) bool {
	for _, e := range errs {
		if e.ValidationType != helpers.PathValidation {
			return false
		}
	}
	return len(errs) > 0
}

// checkUndescribed checks the answer to a route the contract does not list. openapi.yaml's preamble promises
// `404 route_not_found` (an unknown path) or `405 method_not_allowed` (a known path, another method) as a
// problem, and for a CORS preflight `204` (an allowed origin) or `403 forbidden_origin`: nothing else may come
// back.
func checkUndescribed(req *http.Request, resp *http.Response) error {
	data, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(bytes.NewReader(data))
	var p struct {
		Type, Title, Code string
		Status            int
	}
	_ = json.Unmarshal(data, &p)
	want := map[int]string{http.StatusNotFound: "route_not_found", http.StatusMethodNotAllowed: "method_not_allowed"}[resp.StatusCode]
	if req.Method == http.MethodOptions && req.Header.Get("Access-Control-Request-Method") != "" {
		if resp.StatusCode == http.StatusNoContent && len(data) == 0 {
			return nil
		}
		want = map[int]string{http.StatusForbidden: "forbidden_origin"}[resp.StatusCode]
	}
	if want == "" || p.Code != want || p.Type != "/problems/"+want || p.Status != resp.StatusCode ||
		resp.Header.Get("Content-Type") != "application/problem+json" {
		return fmt.Errorf("%s %s is not in openapi.yaml and answered %d (%s) %q; want 404 route_not_found, 405 method_not_allowed (or for a preflight 204, 403 forbidden_origin) as problem+json",
			req.Method, req.URL.Path, resp.StatusCode, resp.Header.Get("Content-Type"), data)
	}
	return nil
}

// outsideContract is true for the embedded UI's static files: unknown GET paths outside the API fall through to
// its file server, which the contract does not describe.
func outsideContract(req *http.Request) bool {
	if req.Method != http.MethodGet {
		return false
	}
	p := req.URL.Path
	for _, api := range []string{"/v1/", "/acp", "/healthz", "/readyz", "/metrics", "/openapi.yaml"} {
		if strings.HasPrefix(p, api) {
			return false
		}
	}
	return true
}
