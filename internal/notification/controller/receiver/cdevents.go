package receiver

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// headerCEType is the CloudEvents binary-mode header naming the event
// type, which spec.events is matched against (as Flux does).
const headerCEType = "Ce-Type"

// cdEventsV04 maps each event of the CDEvents v0.4 specification,
// "<subject>.<predicate>", to the version of its schema there. An event
// is accepted when its major version is the same (how the CDEvents Go SDK
// decides compatibility).
var cdEventsV04 = map[string]string{
	"artifact.deleted": "0.1.0", "artifact.downloaded": "0.1.0", "artifact.packaged": "0.2.0",
	"artifact.published": "0.2.0", "artifact.signed": "0.2.0",
	"branch.created": "0.2.0", "branch.deleted": "0.2.0",
	"build.queued": "0.2.0", "build.started": "0.2.0", "build.finished": "0.2.0",
	"change.abandoned": "0.2.0", "change.created": "0.3.0", "change.merged": "0.2.0",
	"change.reviewed": "0.2.0", "change.updated": "0.2.0",
	"environment.created": "0.2.0", "environment.deleted": "0.2.0", "environment.modified": "0.2.0",
	"incident.detected": "0.2.0", "incident.reported": "0.2.0", "incident.resolved": "0.2.0",
	"pipelinerun.queued": "0.2.0", "pipelinerun.started": "0.2.0", "pipelinerun.finished": "0.2.0",
	"repository.created": "0.2.0", "repository.deleted": "0.2.0", "repository.modified": "0.2.0",
	"service.deployed": "0.2.0", "service.published": "0.2.0", "service.removed": "0.2.0",
	"service.rolledback": "0.2.0", "service.upgraded": "0.2.0",
	"taskrun.started": "0.2.0", "taskrun.finished": "0.2.0",
	"testcaserun.queued": "0.2.0", "testcaserun.started": "0.2.0", "testcaserun.finished": "0.2.0",
	"testcaserun.skipped":  "0.1.0",
	"testoutput.published": "0.2.0",
	"testsuiterun.queued":  "0.2.0", "testsuiterun.started": "0.2.0", "testsuiterun.finished": "0.2.0",
	"ticket.created": "0.1.0", "ticket.updated": "0.1.0", "ticket.closed": "0.1.0",
}

var (
	// cdEventType is "dev.cdevents.<subject>.<predicate>.<semver>".
	cdEventType = regexp.MustCompile(`^dev\.cdevents\.([a-z]+)\.([a-z]+)\.((0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*))$`)
	// cdCustomType is a custom event, "dev.cdeventsx.<tool>-<subject>.<predicate>.<semver>".
	cdCustomType = regexp.MustCompile(`^dev\.cdeventsx\.[a-z0-9]+-[a-z]+\.[a-z]+\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)
	// cdSpecVersion is any v0.4 patch release of the specification.
	cdSpecVersion = regexp.MustCompile(`^0\.4\.(0|[1-9][0-9]*)$`)
)

// cdEvent is the envelope every CDEvent shares.
type cdEvent struct {
	Context *struct {
		SpecVersion string `json:"specversion"`
		ID          string `json:"id"`
		Source      string `json:"source"`
		Type        string `json:"type"`
		Timestamp   string `json:"timestamp"`
	} `json:"context"`
	Subject *struct {
		ID      string          `json:"id"`
		Source  string          `json:"source"`
		Content json.RawMessage `json:"content"`
	} `json:"subject"`
}

// validateCDEvents checks a CDEvent the way Flux's validation of it by
// the CDEvents SDK turns out: a v0.4 event whose type the specification
// defines (or a custom one), with the context and subject fields every
// schema requires; then Ce-Type against spec.events. The per-event
// content schemas are not checked (docs/api/receiver.md says why).
func validateCDEvents(req request, _ string, events []string) (verdict, error) {
	if err := checkCDEvent(req.body); err != nil {
		return verdict{}, fmt.Errorf("%w: unable to validate CDEvent event: %w", errBadPayload, err)
	}
	event := req.header.Get(headerCEType)
	if err := acceptEvent("CDEvents", event, events); err != nil {
		return verdict{}, err
	}
	return verdict{event: event}, nil
}

func checkCDEvent(body []byte) error {
	var ev cdEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		return fmt.Errorf("the body is not a JSON object: %w", err)
	}
	if ev.Context == nil || ev.Subject == nil {
		return fmt.Errorf("'context' and 'subject' are required")
	}
	c := ev.Context
	switch {
	case !cdSpecVersion.MatchString(c.SpecVersion):
		return fmt.Errorf("context.specversion %q is not a 0.4 release", truncate(c.SpecVersion))
	case c.ID == "":
		return fmt.Errorf("context.id is required")
	case !validURIReference(c.Source):
		return fmt.Errorf("context.source %q is not a URI reference", truncate(c.Source))
	}
	if _, err := time.Parse(time.RFC3339Nano, c.Timestamp); err != nil {
		return fmt.Errorf("context.timestamp %q is not an RFC 3339 date-time", truncate(c.Timestamp))
	}
	if err := checkCDEventType(c.Type); err != nil {
		return err
	}
	s := ev.Subject
	if s.ID == "" {
		return fmt.Errorf("subject.id is required")
	}
	if s.Source != "" && !validURIReference(s.Source) {
		return fmt.Errorf("subject.source %q is not a URI reference", truncate(s.Source))
	}
	var content map[string]any
	if err := json.Unmarshal(s.Content, &content); err != nil || content == nil {
		return fmt.Errorf("subject.content must be an object")
	}
	return nil
}

// checkCDEventType accepts the types of the v0.4 specification whose
// major version matches, and custom types.
func checkCDEventType(t string) error {
	if cdCustomType.MatchString(t) {
		return nil
	}
	m := cdEventType.FindStringSubmatch(t)
	if m == nil {
		return fmt.Errorf("context.type %q is not a CDEvents type", truncate(t))
	}
	known, ok := cdEventsV04[m[1]+"."+m[2]]
	if !ok {
		return fmt.Errorf("unknown event type %s", truncate(t))
	}
	if major, _, _ := strings.Cut(known, "."); major != m[4] {
		return fmt.Errorf("sdk event version %s not compatible with %s", known, m[3])
	}
	return nil
}

func validURIReference(s string) bool {
	if s == "" {
		return false
	}
	_, err := url.Parse(s)
	return err == nil
}
