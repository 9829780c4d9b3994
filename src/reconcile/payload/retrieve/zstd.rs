//! Zstandard layer decompression (`application/vnd.oci.image.layer.v1.tar+zstd`, also the
//! `zstd:chunked` layers of containers/storage): every frame of the stream in turn, skippable
//! frames read past, with `ruzstd` (pure Rust: registry bytes are untrusted input, and no C
//! toolchain is needed to build cvo; payload layers are a few megabytes, so its speed does not
//! matter). A frame's window is capped at [`MAX_WINDOW_BYTES`], as libzstd's default
//! `ZSTD_d_windowLogMax` caps it.

use std::io::{self, BufRead, Read};

use ruzstd::decoding::{
    BlockDecodingStrategy, FrameDecoder,
    errors::{FrameDecoderError, ReadFrameHeaderError},
};

/// Largest frame window accepted (128 MiB, libzstd's default limit for decompression): the
/// decoder's memory is bounded by it whatever a frame header claims.
pub const MAX_WINDOW_BYTES: u64 = 128 << 20;

/// Whether `head` (a layer's first bytes) starts a zstd stream: a frame's magic number or a
/// skippable frame's.
pub fn is_zstd(head: &[u8]) -> bool {
    match head {
        [0x28, 0xb5, 0x2f, 0xfd, ..] => true,
        [b0, 0x2a, 0x4d, 0x18, ..] => (0x50..=0x5f).contains(b0),
        _ => false,
    }
}

/// A reader of the decompressed bytes of all frames of a zstd stream.
pub struct Frames<R: BufRead> {
    source: R,
    decoder: FrameDecoder,
    in_frame: bool,
}

impl<R: BufRead> Frames<R> {
    /// Reads the zstd stream `source`.
    pub fn new(source: R) -> Self {
        let mut decoder = FrameDecoder::new();
        decoder.set_max_window_size(MAX_WINDOW_BYTES);
        Self {
            source,
            decoder,
            in_frame: false,
        }
    }

    /// Starts the next data frame, reading past skippable ones. `false` at the end of the
    /// stream.
    fn next_frame(&mut self) -> io::Result<bool> {
        loop {
            if self.source.fill_buf()?.is_empty() {
                return Ok(false);
            }
            match self.decoder.reset(&mut self.source) {
                Ok(()) => return Ok(true),
                Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame {
                    length,
                    ..
                })) => {
                    let skipped = io::copy(&mut (&mut self.source).take(u64::from(length)), &mut io::sink())?;
                    if skipped < u64::from(length) {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "zstd: truncated skippable frame",
                        ));
                    }
                }
                Err(e) => return Err(io::Error::other(format!("zstd: {e}"))),
            }
        }
    }
}

impl<R: BufRead> Read for Frames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if !self.in_frame {
                if !self.next_frame()? {
                    return Ok(0);
                }
                self.in_frame = true;
            }
            while self.decoder.can_collect() == 0 && !self.decoder.is_finished() {
                self.decoder
                    .decode_blocks(&mut self.source, BlockDecodingStrategy::UptoBlocks(1))
                    .map_err(|e| io::Error::other(format!("zstd: {e}")))?;
            }
            let n = self.decoder.read(buf)?;
            if n > 0 {
                return Ok(n);
            }
            // This frame is done: on to the next one, if any.
            self.in_frame = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compress(data: &[u8]) -> Vec<u8> {
        ruzstd::encoding::compress_to_vec(data, ruzstd::encoding::CompressionLevel::Fastest)
    }

    #[test]
    fn frames_and_skippable_frames_are_read_in_turn() {
        let (a, b) = (vec![7u8; 300_000], b"second frame".to_vec());
        let mut stream = compress(&a);
        // A skippable frame (magic 0x184D2A53, 5 bytes) between two data frames.
        stream.extend_from_slice(&[0x53, 0x2a, 0x4d, 0x18, 5, 0, 0, 0, 1, 2, 3, 4, 5]);
        stream.extend_from_slice(&compress(&b));
        assert!(is_zstd(&stream));
        let mut out = Vec::new();
        Frames::new(&stream[..]).read_to_end(&mut out).expect("decode");
        assert_eq!(out.len(), a.len() + b.len());
        assert_eq!(&out[a.len()..], &b[..]);
        assert!(is_zstd(&[0x5f, 0x2a, 0x4d, 0x18]));
        assert!(!is_zstd(&[0x1f, 0x8b, 0x08, 0x00]));
    }

    #[test]
    fn garbage_and_truncation_are_errors() {
        let mut stream = compress(&[1u8; 100_000]);
        stream.truncate(stream.len() / 2);
        let err = Frames::new(&stream[..])
            .read_to_end(&mut Vec::new())
            .expect_err("truncated");
        assert!(err.to_string().contains("zstd"), "{err}");
        let err = Frames::new(&[0x28, 0xb5, 0x2f, 0xfd, 0xff, 0xff][..])
            .read_to_end(&mut Vec::new())
            .expect_err("garbage");
        assert!(err.to_string().starts_with("zstd: "), "{err}");
    }
}
