package awskms

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// sessionLifetime is how long the session credentials STS issues last.
const sessionLifetime = time.Hour

type stsCredentials struct {
	AccessKeyID     string `xml:"AccessKeyId"`
	SecretAccessKey string `xml:"SecretAccessKey"`
	SessionToken    string `xml:"SessionToken"`
	Expiration      string `xml:"Expiration"`
}

type stsResult struct {
	Credentials     stsCredentials `xml:"Credentials"`
	AssumedRoleUser struct {
		Arn           string `xml:"Arn"`
		AssumedRoleID string `xml:"AssumedRoleId"`
	} `xml:"AssumedRoleUser"`
}

// serveSTS answers STS's query protocol: a form POST with Action. A web
// identity exchange is unsigned (the token is the credential); AssumeRole
// is signed by the caller's credentials.
func (s *Server) serveSTS(w http.ResponseWriter, r *http.Request, body []byte) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		writeSTSError(w, http.StatusBadRequest, "MalformedInput", "cannot parse the form")
		return
	}
	rec := Request{Operation: form.Get("Action"), RoleARN: form.Get("RoleArn"), SessionName: form.Get("RoleSessionName"),
		WebIdentityToken: form.Get("WebIdentityToken")}
	switch rec.Operation {
	case "AssumeRoleWithWebIdentity":
		if rec.WebIdentityToken == "" {
			rec.Status = http.StatusBadRequest
			s.record(rec)
			writeSTSError(w, rec.Status, "InvalidIdentityToken", "no web identity token")
			return
		}
	case "AssumeRole":
		signed, aerr := s.verify(r, body, "sts")
		rec.AccessKeyID, rec.Region, rec.Service = signed.AccessKeyID, signed.Region, signed.Service
		if aerr != nil {
			rec.Status = http.StatusForbidden
			s.record(rec)
			writeSTSError(w, rec.Status, aerr.code, aerr.message)
			return
		}
	default:
		rec.Status = http.StatusBadRequest
		s.record(rec)
		writeSTSError(w, rec.Status, "InvalidAction", "unknown action "+rec.Operation)
		return
	}
	if rec.RoleARN == "" || rec.SessionName == "" {
		rec.Status = http.StatusBadRequest
		s.record(rec)
		writeSTSError(w, rec.Status, "ValidationError", "RoleArn and RoleSessionName are required")
		return
	}
	rec.Status = http.StatusOK
	s.record(rec)
	s.writeSession(w, rec)
}

// writeSession issues session credentials for the role, valid at the KMS
// half from now on.
func (s *Server) writeSession(w http.ResponseWriter, rec Request) {
	s.mu.Lock()
	s.sessions++
	n := s.sessions
	s.mu.Unlock()
	id := fmt.Sprintf("ASIAFAKE%08d", n)
	secret := "session-secret-" + b64(rec.RoleARN+rec.SessionName)
	s.AddAccessKey(id, secret)
	var res stsResult
	res.Credentials = stsCredentials{AccessKeyID: id, SecretAccessKey: secret, SessionToken: "session-token-" + id,
		Expiration: time.Now().Add(sessionLifetime).UTC().Format(time.RFC3339)}
	res.AssumedRoleUser.Arn = rec.RoleARN + "/" + rec.SessionName
	res.AssumedRoleUser.AssumedRoleID = "AROAFAKE:" + rec.SessionName
	type response struct {
		XMLName  xml.Name
		Xmlns    string    `xml:"xmlns,attr"`
		Result   stsResult `xml:"-"`
		Inner    any
		Metadata struct {
			RequestID string `xml:"RequestId"`
		} `xml:"ResponseMetadata"`
	}
	out := response{XMLName: xml.Name{Local: rec.Operation + "Response"}, Xmlns: "https://sts.amazonaws.com/doc/2011-06-15/"}
	out.Inner = struct {
		XMLName xml.Name
		stsResult
	}{xml.Name{Local: rec.Operation + "Result"}, res}
	out.Metadata.RequestID = id
	w.Header().Set("Content-Type", "text/xml")
	_ = xml.NewEncoder(w).Encode(out)
}

func writeSTSError(w http.ResponseWriter, status int, code, message string) {
	type errorResponse struct {
		XMLName xml.Name `xml:"ErrorResponse"`
		Error   struct {
			Type    string `xml:"Type"`
			Code    string `xml:"Code"`
			Message string `xml:"Message"`
		} `xml:"Error"`
		RequestID string `xml:"RequestId"`
	}
	var e errorResponse
	e.Error.Type, e.Error.Code, e.Error.Message, e.RequestID = "Sender", code, message, "fake"
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	_ = xml.NewEncoder(w).Encode(e)
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
