package githostserver

import (
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestAppJWTIsCheckedAsGitHubChecksIt(t *testing.T) {
	key, _ := NewAppKey(t)
	other, _ := NewAppKey(t)
	a := &App{ID: 12, PublicKey: &key.PublicKey}
	now := time.Now()
	sign := func(method jwt.SigningMethod, k any, iss string, iat, exp time.Time) string {
		s, err := jwt.NewWithClaims(method, jwt.RegisteredClaims{
			Issuer: iss, IssuedAt: jwt.NewNumericDate(iat), ExpiresAt: jwt.NewNumericDate(exp),
		}).SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return "Bearer " + s
	}
	tests := []struct {
		name, header, want string
	}{
		{"good", sign(jwt.SigningMethodRS256, key, "12", now, now.Add(2*time.Minute)), ""},
		{"another app's key", sign(jwt.SigningMethodRS256, other, "12", now, now.Add(time.Minute)), "A JSON web token could not be decoded"},
		{"another issuer", sign(jwt.SigningMethodRS256, key, "13", now, now.Add(time.Minute)), "A JSON web token could not be decoded"},
		{"expired", sign(jwt.SigningMethodRS256, key, "12", now.Add(-time.Hour), now.Add(-time.Minute)), "A JSON web token could not be decoded"},
		{"lives over ten minutes", sign(jwt.SigningMethodRS256, key, "12", now, now.Add(11*time.Minute)), "'Expiration time' claim ('exp') is too far in the future"},
		{"HMAC", sign(jwt.SigningMethodHS256, []byte("k"), "12", now, now.Add(time.Minute)), "A JSON web token could not be decoded"},
		{"no bearer", "token abc", "A JSON web token could not be decoded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := verifyAppJWT(a, tt.header); got != tt.want {
				t.Errorf("verifyAppJWT() = %q, want %q", got, tt.want)
			}
		})
	}
}
