"""Keep rope_lib's Chinese catalog in step with the code (`make translations`).

    python scripts/translations.py          # extract, merge into the .po, compile the .mo

1. extract every message marked in rope_lib (`_`, `_fig`, `N_`, `ngettext`) and in
   scripts/make_images.py (the README's pictures) with Babel;
2. merge them into rope_lib/locale/zh/LC_MESSAGES/rope_lib.po: translations of messages
   still in the code are kept, new messages arrive untranslated (fill in their msgstr),
   messages gone from the code are dropped;
3. compile rope_lib.mo, which gettext reads at run time.

tests/i18n/test_translations.py fails when a message has no translation, when a translation
changes a {placeholder}, or when the .mo is older than the .po.
"""

from __future__ import annotations

import sys
from pathlib import Path
from tokenize import TokenError

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_file
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "rope_lib"
CATALOG = PACKAGE / "locale" / "zh" / "LC_MESSAGES" / "rope_lib.po"


def sources() -> list[Path]:
    """Where the marked messages are: rope_lib, and the script drawing the README's
    pictures."""
    return sorted(PACKAGE.rglob("*.py")) + [ROOT / "scripts" / "make_images.py"]


KEYWORDS = {"_": None, "_fig": None, "N_": None, "ngettext": (1, 2)}


def extract() -> Catalog:
    """Every marked message of sources(), in the order the code has them."""
    template = Catalog(project="rope-notebooks", fuzzy=False)
    for path in sources():
        try:
            found = extract_from_file(
                "python", path, keywords=KEYWORDS, comment_tags=("TRANSLATORS:",)
            )
        except (SyntaxError, TokenError) as error:
            raise SystemExit(f"{path.relative_to(ROOT)}: cannot read it: {error}")
        for lineno, message, comments, context in found:
            template.add(
                message,
                locations=[(str(path.relative_to(ROOT)), lineno)],
                auto_comments=comments,
                context=context,
            )
    return template


def read_catalog(path: Path = CATALOG) -> Catalog:
    with path.open("rb") as file:
        return read_po(file, locale="zh_Hans_CN", domain="rope_lib")


def merged() -> Catalog:
    """The .po's translations carried over onto the messages the code has now."""
    catalog = (
        read_catalog()
        if CATALOG.exists()
        else Catalog(locale="zh_Hans_CN", domain="rope_lib", project="rope-notebooks")
    )
    catalog.update(extract(), no_fuzzy_matching=True, update_creation_date=False)
    catalog.obsolete.clear()
    catalog.fuzzy = False
    return catalog


def write(catalog: Catalog) -> None:
    CATALOG.parent.mkdir(parents=True, exist_ok=True)
    with CATALOG.open("wb") as file:
        write_po(file, catalog, width=88, omit_header=False, include_lineno=False)
    with CATALOG.with_suffix(".mo").open("wb") as file:
        write_mo(file, read_catalog())


def main() -> None:
    catalog = merged()
    write(catalog)
    missing = [m.id for m in catalog if m.id and not m.string]
    print(
        f"{CATALOG.relative_to(ROOT)}: {len(catalog)} messages, {len(missing)} untranslated"
    )
    for message in missing:
        print("  untranslated:", message if isinstance(message, str) else message[0])
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
