package ssa

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
)

// immutableMessage matches how the API server, CEL rules (x-kubernetes-
// validations "self == oldSelf" rules say "is immutable") and admission
// webhooks word a change to a field that cannot change.
var immutableMessage = regexp.MustCompile(`(?i)(is\s+immutable|immutable\s+field|may\s+not\s+change\s+once\s+set|updates\s+to\s+\S+\s+spec\s+for\s+fields\s+other\s+than)`)

// isImmutable reports whether err rejects a change to an immutable field.
//
// Flux treats every Invalid or Conflict answer as one, so with force on an
// object that merely fails validation is deleted, and stays deleted when
// its re-creation fails the same way. weir asks for the server to say so:
// an Invalid, BadRequest or Forbidden answer (the last two from webhooks
// and admission policies) whose message names an immutable field.
func isImmutable(err error) bool {
	if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) && !apierrors.IsForbidden(err) {
		return false
	}
	return immutableMessage.MatchString(err.Error())
}

// ImmutableFieldError is Apply's answer when an object's manifest changes a
// field the API server will not change in place and force is off.
type ImmutableFieldError struct {
	Object ObjMetadata
	// Fields are the paths the server names, e.g. "spec.template".
	Fields []string
	Err    error
}

func newImmutableFieldError(id ObjMetadata, err error) *ImmutableFieldError {
	e := &ImmutableFieldError{Object: id, Err: err}
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Details != nil {
		for _, c := range status.Status().Details.Causes {
			if c.Field != "" && immutableMessage.MatchString(c.Message) {
				e.Fields = append(e.Fields, c.Field)
			}
		}
	}
	return e
}

// Error names the object and fields, says how to allow the recreation,
// and ends with the API server's message.
func (e *ImmutableFieldError) Error() string {
	field := "an immutable field"
	if len(e.Fields) > 0 {
		field = "immutable field " + strings.Join(e.Fields, ", ")
	}
	return fmt.Sprintf("%s dry-run failed: %s changed, which needs the object recreated "+
		"(enable spec.force or annotate it %s: %s): %v",
		e.Object, field, kustomizev1.ForceAnnotation, kustomizev1.EnabledValue, e.Err)
}

// Unwrap returns the API server's error.
func (e *ImmutableFieldError) Unwrap() error { return e.Err }
