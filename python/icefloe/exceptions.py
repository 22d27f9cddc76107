"""The icefloe exception hierarchy.

Every error icefloe raises is an `IcefloeError`. The core's kinds come from the native
module (declared there as `icefloe.exceptions.*`); the catalog errors below use
PyIceberg's names so code written against PyIceberg catches the same things.
"""

from __future__ import annotations

from icefloe._native import (
    CommitConflictError,
    IcefloeError,
    IcefloeIOError,
    InvalidDataError,
    NotFoundError,
    NotSupportedError,
    ResourceLimitError,
    ValidationError,
)

__all__ = [
    "CommitConflictError",
    "CommitFailedException",
    "CommitStateUnknownException",
    "IcefloeError",
    "IcefloeIOError",
    "InvalidDataError",
    "NamespaceAlreadyExistsError",
    "NamespaceNotEmptyError",
    "NoSuchNamespaceError",
    "NoSuchPlanError",
    "NoSuchTableError",
    "NoSuchViewError",
    "NotFoundError",
    "NotSupportedError",
    "ResourceLimitError",
    "ScanPlanningError",
    "TableAlreadyExistsError",
    "ValidationError",
    "ViewAlreadyExistsError",
]


class NoSuchTableError(IcefloeError):
    """The catalog has no table with this identifier."""


class NoSuchNamespaceError(IcefloeError):
    """The catalog has no namespace with this identifier."""


class TableAlreadyExistsError(IcefloeError):
    """A table with this identifier already exists."""


class NamespaceAlreadyExistsError(IcefloeError):
    """A namespace with this identifier already exists."""


class NoSuchViewError(IcefloeError):
    """The catalog has no view with this identifier."""


class ViewAlreadyExistsError(IcefloeError):
    """A view with this identifier already exists."""


class NamespaceNotEmptyError(IcefloeError):
    """The namespace still holds tables or namespaces."""


class CommitStateUnknownException(IcefloeError):
    """The catalog could not tell whether a commit went through; icefloe neither retries
    nor deletes the files the commit references (they may be live)."""


class NoSuchPlanError(NotFoundError):
    """A REST catalog's server knows no scan plan or plan task of this id (never made,
    cancelled or expired)."""


class ScanPlanningError(IcefloeError):
    """A REST catalog's server-side scan planning failed, was cancelled or did not finish in
    time (the message names the plan)."""


# PyIceberg's name for a lost compare-and-swap.
CommitFailedException = CommitConflictError
