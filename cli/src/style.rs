//! Colour in the text outputs: severities in `check`, bad ICRCs in `dissect`.
//!
//! Why decided once: the choice (`--color auto|always|never`; `auto` honours `NO_COLOR`,
//! `CLICOLOR` / `CLICOLOR_FORCE` and whether stdout is a terminal, as anstream decides it
//! for clap's own help) is made before the first line and the styles are then written only
//! when it is on, so a pipe or a file never sees an escape code and pays nothing per frame
//! for stripping them.

use std::fmt::Display;

use anstyle::{AnsiColor, Style};
use roce_conformance::Severity;

/// `--color`: when the text output is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorWhen {
    /// When stdout is a terminal and `NO_COLOR` is not set
    #[default]
    Auto,
    Always,
    Never,
}

/// The styles of one run: plain text when colour is off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Paint {
    on: bool,
}

const ERROR: Style = AnsiColor::Red.on_default().bold();
const WARNING: Style = AnsiColor::Yellow.on_default();
const HEADING: Style = Style::new().bold();

impl Paint {
    /// Colour for stdout, as `--color` says.
    pub fn for_stdout(when: ColorWhen) -> Paint {
        let choice = match when {
            ColorWhen::Auto => anstream::ColorChoice::Auto,
            ColorWhen::Always => anstream::ColorChoice::Always,
            ColorWhen::Never => anstream::ColorChoice::Never,
        };
        anstream::ColorChoice::write_global(choice);
        let resolved = anstream::AutoStream::choice(&std::io::stdout());
        Paint { on: resolved != anstream::ColorChoice::Never }
    }

    /// No colour (tests, files).
    pub const fn plain() -> Paint {
        Paint { on: false }
    }

    /// Whether styles are written.
    pub const fn is_on(self) -> bool {
        self.on
    }

    fn styled(self, style: Style, text: impl Display) -> String {
        if self.on {
            format!("{}{text}{}", style.render(), style.render_reset())
        } else {
            text.to_string()
        }
    }

    /// `text` in the colour of `severity` (errors red and bold, warnings yellow).
    pub fn severity(self, severity: Severity, text: impl Display) -> String {
        match severity {
            Severity::Error => self.styled(ERROR, text),
            Severity::Warning => self.styled(WARNING, text),
        }
    }

    /// `text` marked as bad (a bad ICRC): the error colour.
    pub fn bad(self, text: impl Display) -> String {
        self.styled(ERROR, text)
    }

    /// A heading (bold).
    pub fn heading(self, text: impl Display) -> String {
        self.styled(HEADING, text)
    }
}
