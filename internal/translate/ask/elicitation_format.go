package ask

import (
	"errors"
	"net/mail"
	"net/url"
	"time"
)

// checkFormat checks a string against the formats an elicitation schema may name (email, uri, date,
// date-time). An unknown format is not checked: a newer schema must not make every answer invalid.
func checkFormat(format, s string) error {
	switch format {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return errors.New("must be an email address")
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return errors.New("must be an absolute URI")
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return errors.New("must be a date (YYYY-MM-DD)")
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return errors.New("must be an RFC 3339 date-time")
		}
	}
	return nil
}
