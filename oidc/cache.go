package oidc

import (
	"crypto/sha256"
	"maps"
	"slices"
	"sync"
	"time"
	"unsafe"
)

// defaultTokenCacheTTL is how long a verified token is answered from the
// cache at most: kube-apiserver's own success cache TTL
// (TokenSuccessCacheTTL, which, unlike this cache, ignores exp).
const defaultTokenCacheTTL = 10 * time.Second

// TokenCacheConfig configures the verified-token cache: a token Verify
// accepted is answered from memory, without the signature check, until
// its exp, MaxTTL after it was verified, or a JWKS fetch that changes the
// issuer's keys, whichever comes first. Rejections are never cached.
//
// It is off by default: with it, a call does not observe what changes
// between calls other than the clock and the keys, and a caller that
// needs per-call revocation (a key it revokes out of band, a
// KeyRefreshOnExpiry cache it expects to refetch) should leave it off.
// kube-apiserver caches successful authentications for 10 seconds anyway.
type TokenCacheConfig struct {
	// Size is how many tokens are kept (least recently used go first).
	// 0 turns the cache off.
	Size int
	// MaxTTL bounds how long a token is answered from the cache. Default
	// 10s, kube-apiserver's own success cache TTL.
	MaxTTL time.Duration
}

// tokenCache maps the SHA-256 of a token (never the token) to the user it
// verified as. It is an LRU list under one mutex.
type tokenCache struct {
	size int
	ttl  time.Duration

	mu         sync.Mutex
	entries    map[[sha256.Size]byte]*cacheEntry
	head, tail *cacheEntry // most and least recently used
	gen        uint64      // bumped by clear: a verification that began before is not cached
}

type cacheEntry struct {
	key        [sha256.Size]byte
	user       *UserInfo
	exp, until time.Time // the token's exp; verified + MaxTTL
	prev, next *cacheEntry
}

func newTokenCache(cfg TokenCacheConfig) *tokenCache {
	if cfg.Size <= 0 {
		return nil
	}
	if cfg.MaxTTL <= 0 {
		cfg.MaxTTL = defaultTokenCacheTTL
	}
	return &tokenCache{size: cfg.Size, ttl: cfg.MaxTTL, entries: make(map[[sha256.Size]byte]*cacheEntry, cfg.Size)}
}

// cacheKey hashes the token through a read-only view of its bytes.
func cacheKey(token string) [sha256.Size]byte {
	return sha256.Sum256(unsafe.Slice(unsafe.StringData(token), len(token)))
}

// get returns a copy of the cached user, or nil and the generation a
// verification starting now must hand to put.
func (c *tokenCache) get(key [sha256.Size]byte, now time.Time) (*UserInfo, uint64) {
	c.mu.Lock()
	e := c.entries[key]
	if e == nil {
		gen := c.gen
		c.mu.Unlock()
		return nil, gen
	}
	if e.exp.Before(now) || !now.Before(e.until) { // exp has no leeway, as in Verify
		c.unlink(e)
		delete(c.entries, key)
		gen := c.gen
		c.mu.Unlock()
		return nil, gen
	}
	c.unlink(e)
	c.pushFront(e)
	u := e.user
	c.mu.Unlock()
	return cloneUser(u), 0
}

// put caches a verified user, unless the keys changed (clear) since the
// verification began (gen from get).
func (c *tokenCache) put(key [sha256.Size]byte, u *UserInfo, exp, now time.Time, gen uint64) {
	e := &cacheEntry{key: key, user: cloneUser(u), exp: exp, until: now.Add(c.ttl)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if old := c.entries[key]; old != nil {
		c.unlink(old)
	}
	c.entries[key] = e
	c.pushFront(e)
	for len(c.entries) > c.size {
		last := c.tail
		c.unlink(last)
		delete(c.entries, last.key)
	}
}

// clear drops every entry (the keys changed). A nil cache is a no-op.
func (c *tokenCache) clear() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
	c.head, c.tail = nil, nil
	c.gen++
}

// len counts the entries (for tests).
func (c *tokenCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

func (c *tokenCache) unlink(e *cacheEntry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		c.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		c.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

func (c *tokenCache) pushFront(e *cacheEntry) {
	e.next = c.head
	if c.head != nil {
		c.head.prev = e
	}
	c.head = e
	if c.tail == nil {
		c.tail = e
	}
}

// cloneUser copies u so that callers cannot change a cached user.
func cloneUser(u *UserInfo) *UserInfo {
	out := &UserInfo{Username: u.Username, UID: u.UID, Groups: slices.Clone(u.Groups)}
	if u.Extra != nil {
		out.Extra = maps.Clone(u.Extra)
		for k, v := range out.Extra {
			out.Extra[k] = slices.Clone(v)
		}
	}
	return out
}
