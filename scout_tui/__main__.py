from scout_tui.cli import main

raise SystemExit(main())
