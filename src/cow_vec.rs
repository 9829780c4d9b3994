//! [`CowVec`]: a vector that snapshots share, chunked behind `Arc`s (copy-on-write). A
//! generic container below every layer: the engine's contract (`reconcile::api`) publishes task
//! states and drift records in it, the sync worker writes them, the dashboard reads them.

use std::sync::Arc;

use serde::Serialize;

/// Elements per [`CowVec`] chunk.
const COW_CHUNK: usize = 64;

/// A vector that snapshots share: the elements live in chunks of 64 behind `Arc`s, so a clone
/// copies only the chunk table (one pointer per 64 elements) and a write copies only the chunk
/// it touches (copy-on-write). The engine publishes task states and drift records in it, so a
/// snapshot after one finished task costs O(N / 64 + 64) instead of a copy of every element.
/// Read it like a slice: [`CowVec::get`], [`CowVec::iter`], [`CowVec::len`], `&v[i]`.
pub struct CowVec<T> {
    chunks: Vec<Arc<Vec<T>>>,
    len: usize,
}

impl<T> CowVec<T> {
    /// An empty vector.
    pub fn new() -> Self {
        Self {
            chunks: Vec::new(),
            len: 0,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Element `i`, `None` past the end.
    pub fn get(&self, i: usize) -> Option<&T> {
        self.chunks.get(i / COW_CHUNK)?.get(i % COW_CHUNK)
    }

    /// The elements in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + '_ {
        self.chunks.iter().flat_map(|c| c.iter())
    }

    /// Whether `self` and `other` share every chunk (a clone not written to since): a cheap
    /// "unchanged" test for readers of successive snapshots.
    pub fn ptr_eq(&self, other: &Self) -> bool {
        self.len == other.len
            && self
                .chunks
                .iter()
                .zip(&other.chunks)
                .all(|(a, b)| Arc::ptr_eq(a, b))
    }
}

impl<T: Clone> CowVec<T> {
    /// Element `i` for writing (its chunk is copied first when another clone shares it);
    /// `None` past the end.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        if i >= self.len {
            return None;
        }
        Arc::make_mut(self.chunks.get_mut(i / COW_CHUNK)?).get_mut(i % COW_CHUNK)
    }

    /// Appends `value` (copying the last chunk first when it is shared and not full).
    pub fn push(&mut self, value: T) {
        match self.chunks.last_mut() {
            Some(c) if c.len() < COW_CHUNK => Arc::make_mut(c).push(value),
            _ => {
                let mut c = Vec::with_capacity(COW_CHUNK);
                c.push(value);
                self.chunks.push(Arc::new(c));
            }
        }
        self.len += 1;
    }

    /// The elements as a plain vector (a copy).
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().cloned().collect()
    }
}

impl<T> Clone for CowVec<T> {
    fn clone(&self) -> Self {
        Self {
            chunks: self.chunks.clone(),
            len: self.len,
        }
    }
}

impl<T> Default for CowVec<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for CowVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: PartialEq> PartialEq for CowVec<T> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len
            && self
                .chunks
                .iter()
                .zip(&other.chunks)
                .all(|(a, b)| Arc::ptr_eq(a, b) || a == b)
    }
}

impl<T: Eq> Eq for CowVec<T> {}

impl<T> std::ops::Index<usize> for CowVec<T> {
    type Output = T;
    /// Element `i`; panics past the end, as a slice does (use [`CowVec::get`] for input).
    fn index(&self, i: usize) -> &T {
        &self.chunks[i / COW_CHUNK][i % COW_CHUNK]
    }
}

impl<T> FromIterator<T> for CowVec<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut chunks = Vec::new();
        let mut len = 0;
        let mut cur = Vec::with_capacity(COW_CHUNK);
        for v in iter {
            cur.push(v);
            len += 1;
            if cur.len() == COW_CHUNK {
                chunks.push(Arc::new(std::mem::replace(
                    &mut cur,
                    Vec::with_capacity(COW_CHUNK),
                )));
            }
        }
        if !cur.is_empty() {
            chunks.push(Arc::new(cur));
        }
        Self { chunks, len }
    }
}

impl<T> From<Vec<T>> for CowVec<T> {
    fn from(v: Vec<T>) -> Self {
        v.into_iter().collect()
    }
}

impl<'a, T> IntoIterator for &'a CowVec<T> {
    type Item = &'a T;
    type IntoIter =
        std::iter::FlatMap<std::slice::Iter<'a, Arc<Vec<T>>>, &'a Vec<T>, fn(&'a Arc<Vec<T>>) -> &'a Vec<T>>;
    fn into_iter(self) -> Self::IntoIter {
        let chunk: fn(&'a Arc<Vec<T>>) -> &'a Vec<T> = |c| c;
        self.chunks.iter().flat_map(chunk)
    }
}

impl<T: Serialize> Serialize for CowVec<T> {
    /// A JSON array, as a `Vec` serialises.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cow_vec_copies_only_the_chunk_written() {
        let mut a: CowVec<usize> = (0..200).collect();
        assert_eq!(a.len(), 200);
        assert_eq!(a.get(199), Some(&199));
        assert_eq!(a.get(200), None);
        let b = a.clone();
        assert!(a.ptr_eq(&b));
        if let Some(x) = a.get_mut(70) {
            *x = 7000;
        }
        assert_eq!(a[70], 7000);
        assert_eq!(b[70], 70);
        assert!(!a.ptr_eq(&b));
        // Chunks 0, 2 and 3 are still shared; chunk 1 (64..128) was copied.
        assert!(Arc::ptr_eq(&a.chunks[0], &b.chunks[0]));
        assert!(!Arc::ptr_eq(&a.chunks[1], &b.chunks[1]));
        assert!(Arc::ptr_eq(&a.chunks[3], &b.chunks[3]));
        assert_ne!(a, b);
        assert_eq!(a.get_mut(200), None);
        let mut c = b.clone();
        c.push(200);
        assert_eq!((b.len(), c.len()), (200, 201));
        assert_eq!(c.iter().next_back(), Some(&200));
        assert_eq!((&c).into_iter().sum::<usize>(), (0..=200usize).sum::<usize>());
        assert_eq!(
            serde_json::to_string(&CowVec::from(vec![1, 2])).ok().as_deref(),
            Some("[1,2]")
        );
        assert_eq!(CowVec::<u8>::new().iter().count(), 0);
    }
}
