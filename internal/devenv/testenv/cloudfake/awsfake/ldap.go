package awsfake

import (
	"encoding/xml"
	"fmt"
	"net/http"
)

// ldapAction is MinIO's STS action for LDAP users: a form POST with
// LDAPUsername and LDAPPassword (no signature), answered with temporary
// credentials in the STS XML shape.
const ldapAction = "AssumeRoleWithLDAPIdentity"

type ldapResponse struct {
	XMLName xml.Name `xml:"AssumeRoleWithLDAPIdentityResponse"`
	Xmlns   string   `xml:"xmlns,attr"`
	Result  struct {
		Credentials stsCredentials `xml:"Credentials"`
	} `xml:"AssumeRoleWithLDAPIdentityResult"`
	RequestID string `xml:"ResponseMetadata>RequestId"`
}

func (f *Fake) ldap(w http.ResponseWriter, req Request) {
	form := req.Form
	user, pass := form.Get("LDAPUsername"), form.Get("LDAPPassword")
	f.mu.Lock()
	want, known := f.LDAPUsers[user]
	f.mu.Unlock()
	switch {
	case req.SessionToken != "" || req.Scope != "":
		stsError(w, "InvalidParameterValue", "AssumeRoleWithLDAPIdentity takes no signature")
		return
	case user == "" || pass == "":
		stsError(w, "MissingParameter", "LDAPUsername and LDAPPassword are required")
		return
	case !known || want != pass:
		// MinIO's answer to a failed LDAP bind.
		stsError(w, "InvalidParameterValue", "LDAP server error: LDAP auth failed for DN")
		return
	}
	creds, n := f.issue()
	var resp ldapResponse
	resp.Xmlns, resp.RequestID = stsNS, fmt.Sprintf("req-%d", n)
	resp.Result.Credentials = creds
	w.Header().Set("Content-Type", "text/xml")
	_ = xml.NewEncoder(w).Encode(resp)
}
