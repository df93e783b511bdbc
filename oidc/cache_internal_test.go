package oidc

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTokenCacheLRUAndTTL(t *testing.T) {
	c := newTokenCache(TokenCacheConfig{Size: 2, MaxTTL: 10 * time.Second})
	now := time.Unix(1_700_000_000, 0)
	exp := now.Add(time.Hour)
	key := func(s string) [sha256.Size]byte { return cacheKey(s) }
	get := func(k string, at time.Time) *UserInfo {
		u, _ := c.get(key(k), at)
		return u
	}
	c.put(key("a"), &UserInfo{Username: "a"}, exp, now, 0)
	c.put(key("b"), &UserInfo{Username: "b"}, exp, now, 0)
	require.NotNil(t, get("a", now), "a is now the most recently used")
	c.put(key("c"), &UserInfo{Username: "c"}, exp, now, 0)
	require.Nil(t, get("b", now), "b was the least recently used")
	require.Equal(t, "a", get("a", now).Username)
	require.Equal(t, 2, c.len())

	require.NotNil(t, get("c", now.Add(9*time.Second)))
	require.Nil(t, get("c", now.Add(10*time.Second)), "MaxTTL after it was verified")
	require.Equal(t, 1, c.len(), "the expired entry is dropped")

	c.put(key("d"), &UserInfo{Username: "d"}, now.Add(time.Second), now, 0)
	require.NotNil(t, get("d", now.Add(time.Second)), "exp itself is still valid, as in Verify")
	require.Nil(t, get("d", now.Add(time.Second+time.Nanosecond)))

	_, gen := c.get(key("e"), now) // a verification begins ...
	c.clear()                      // ... the keys change ...
	c.put(key("e"), &UserInfo{Username: "e"}, exp, now, gen)
	require.Nil(t, get("e", now), "... and its result, from the old keys, is not cached")
	require.Zero(t, c.len())
	require.Nil(t, get("a", now))
	var off *tokenCache
	off.clear() // a nil cache is off
	require.Nil(t, newTokenCache(TokenCacheConfig{}))
}
